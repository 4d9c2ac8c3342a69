/**
 * `albedo packages clear`: empties a workspace's package layer, where `%pip install` in its
 * sandboxed cells put packages. Sessions of the workspace that run now keep the layer they bound,
 * emptied; the next session starts with a fresh one.
 */
import { existsSync, realpathSync } from "node:fs";
import { clearPackageLayer, measurePackageLayer, packageLayerDir, readLayerRecord } from "../../sandbox/index.js";
import { stateDir } from "../../platform/index.js";
import { WORKSPACE_OPTION, type CliCommand } from "../plumbing/command.js";
import { workspaceOf } from "../plumbing/workspace.js";
import { sizeText } from "./doctorChecks.js";

export const packagesClear: CliCommand = {
  options: [WORKSPACE_OPTION],
  async run(args, io) {
    const workspace = realpathSync(await workspaceOf(args, io));
    const layer = packageLayerDir(stateDir(io.env), workspace);
    if (!existsSync(layer) && (await readLayerRecord(layer)) === undefined) {
      io.stdout.write(`no package layer for ${workspace}: nothing to clear\n`);
      return 0;
    }
    const { bytes } = await measurePackageLayer(layer);
    await clearPackageLayer(layer);
    io.stdout.write(`cleared the package layer of ${workspace} (${layer}, ${sizeText(bytes)}); running sessions of it lose its packages, new ones start with an empty layer\n`);
    return 0;
  },
};
