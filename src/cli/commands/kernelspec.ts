/**
 * `albedo kernelspec install|list` (K-13): registers the "albedo (Python)" kernelspec, whose kernel
 * (kernel/albedo/launch.py) joins a daemon session for the notebook's project.
 */
import { copyFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { jupyterDataDir, listKernelSpecs } from "../../kernel/index.js";
import { pythonCandidate } from "../../python/index.js";
import { visibleControls } from "../../text/index.js";
import { stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { JSON_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { homeDir, installDir, writeFileAtomic } from "../../platform/index.js";
import { LAUNCHER_INSTALL_ENV, LAUNCHER_NODE_ENV, WORKSPACE_ENV } from "../../bridge/index.js";

/** The kernelspec directory name `install` uses without --name. */
export const DEFAULT_KERNELSPEC_NAME = "albedo";
/** What notebook front ends show for the kernelspec without --display-name. */
export const DEFAULT_KERNELSPEC_DISPLAY_NAME = "albedo (Python)";
/** The module the kernelspec runs (kernel/albedo/launch.py). */
export const LAUNCH_MODULE = "albedo.launch";
/** Mode of kernel.json: every Jupyter that may start the kernelspec reads it, as with `ipykernel install`. */
const KERNELSPEC_FILE_MODE = 0o644;
/** The logo files Jupyter front ends show for a kernelspec, shipped in <install>/priv/kernelspec. */
export const KERNELSPEC_LOGOS: readonly string[] = ["logo-32x32.png", "logo-64x64.png", "logo-svg.svg"];
// jupyter_client's rule for kernelspec directory names.
const KERNEL_NAME = /^[a-zA-Z0-9._-]+$/;

/** The kernel.json written for a kernelspec. */
export interface KernelJson {
  readonly argv: string[];
  readonly display_name: string;
  readonly language: "python";
  readonly interrupt_mode: "signal";
  readonly env: Record<string, string>;
}


/** The kernel.json that runs the launcher with `python`, the install's kernel package and `node` to start a daemon. */
export function albedoKernelJson(python: string, install: string, node: string, displayName: string, workspace?: string): KernelJson {
  return {
    argv: [python, "-m", LAUNCH_MODULE, "-f", "{connection_file}"],
    display_name: displayName,
    language: "python",
    interrupt_mode: "signal",
    env: { PYTHONPATH: join(install, "kernel"), [LAUNCHER_INSTALL_ENV]: install, [LAUNCHER_NODE_ENV]: node, ...(workspace !== undefined ? { [WORKSPACE_ENV]: workspace } : {}) },
  };
}

/** --workspace DIR as an absolute path; a missing directory is a usage error. */
async function pinnedWorkspace(args: ParsedArgs, io: CliIO): Promise<string | undefined> {
  const given = stringOption(args, "workspace");
  if (given === undefined) return undefined;
  const workspace = resolve(io.cwd, given);
  if (!(await stat(workspace).catch(() => undefined))?.isDirectory()) throw new UsageError(`--workspace ${given} is not a directory`);
  return workspace;
}

/** The kernelspec directory the options name. Throws UsageError for a bad name or both targets. */
export function kernelSpecTarget(args: ParsedArgs, io: CliIO): { name: string; dir: string } {
  const name = stringOption(args, "name") ?? DEFAULT_KERNELSPEC_NAME;
  if (!KERNEL_NAME.test(name)) throw new UsageError(`--name must use letters, digits, ".", "_" and "-" only, got ${JSON.stringify(name)}`);
  const prefix = stringOption(args, "prefix");
  if (prefix !== undefined && args.options.has("user")) throw new UsageError("give --user or --prefix, not both");
  const data = prefix === undefined ? resolve(jupyterDataDir(io.env, homeDir(io.env))) : join(isAbsolute(prefix) ? prefix : resolve(io.cwd, prefix), "share", "jupyter");
  return { name: name.toLowerCase(), dir: join(data, "kernels", name.toLowerCase()) };
}

async function install(args: ParsedArgs, io: CliIO): Promise<number> {
  const { name, dir } = kernelSpecTarget(args, io);
  const python = pythonCandidate(io.env);
  const spec = albedoKernelJson(python.path, installDir(), process.execPath, stringOption(args, "display-name") ?? DEFAULT_KERNELSPEC_DISPLAY_NAME, await pinnedWorkspace(args, io));
  const file = join(dir, "kernel.json");
  await writeFileAtomic(file, `${JSON.stringify(spec, null, 2)}\n`, KERNELSPEC_FILE_MODE);
  for (const logo of KERNELSPEC_LOGOS) await copyFile(join(installDir(), "priv", "kernelspec", logo), join(dir, logo));
  if (args.options.has("json")) writeJson(io, { name, file, python: python.path, python_source: python.source, kernel: spec });
  else io.stdout.write(`albedo kernelspec: installed "${spec.display_name}" as ${name} in ${file} (python: ${python.path}, ${python.source})\n`);
  return 0;
}

/** `albedo kernelspec install` (K-13). */
export const kernelspecInstall: CliCommand = {
  options: [
    { name: "user", help: "install for this user (the default): $JUPYTER_DATA_DIR, else ~/.local/share/jupyter" },
    { name: "prefix", value: "DIR", help: "install into DIR/share/jupyter/kernels (e.g. a virtualenv)" },
    { name: "name", value: "NAME", help: `kernelspec directory name (default ${DEFAULT_KERNELSPEC_NAME})` },
    { name: "display-name", value: "TEXT", help: `name notebooks show (default "${DEFAULT_KERNELSPEC_DISPLAY_NAME}")` },
    { name: "workspace", value: "DIR", help: `every notebook on this kernelspec uses DIR as its workspace (sets ${WORKSPACE_ENV}); default: found from each notebook's directory` },
    JSON_OPTION,
  ],
  run: install,
};

/** `albedo kernelspec list`: the kernelspecs Jupyter would find. */
export const kernelspecList: CliCommand = {
  options: [JSON_OPTION],
  async run(args, io) {
    const listing = await listKernelSpecs(io.env);
    if (args.options.has("json")) {
      writeJson(io, { kernelspecs: listing.specs.map((e) => ({ name: e.name, display_name: e.spec.displayName, file: e.file })), problems: listing.problems, searched: listing.searched });
      return 0;
    }
    const width = Math.max(0, ...listing.specs.map((e) => e.name.length));
    // Names are checked, but paths and display names come from whatever the kernel dirs hold.
    for (const entry of listing.specs) io.stdout.write(`${entry.name.padEnd(width)}  ${visibleControls(`${entry.file}  (${entry.spec.displayName})`)}\n`);
    for (const problem of listing.problems) io.stderr.write(`albedo kernelspec: ${visibleControls(problem.message)}\n`);
    if (listing.specs.length === 0) io.stdout.write("no kernelspecs found\n");
    return 0;
  },
};
