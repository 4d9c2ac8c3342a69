/** `albedo restart ID [--restore]`: restart a daemon session's kernel, empty or from its checkpoint (K-15). */
import { API, findRunningDaemon } from "../../api/index.js";
import { stateDir } from "../../platform/index.js";
import { visibleControls } from "../../text/index.js";
import { CliFailure, UsageError } from "../plumbing/args.js";
import { JSON_OPTION, writeJson, type CliCommand } from "../plumbing/command.js";
import { formatUptime } from "./daemonCommands.js";
import { startProgress } from "../terminal/progress.js";

export const restartCommand: CliCommand = {
  options: [JSON_OPTION, { name: "restore", help: "load the kernel's checkpoint before its first cell, so its variables come back (without it the kernel starts empty)" }],
  async run(args, io) {
    const [id, ...extra] = args.positionals;
    if (id === undefined) throw new UsageError("give the session ID to restart (`albedo sessions` lists them)");
    if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
    const state = stateDir(io.env);
    const daemon = await findRunningDaemon(state);
    if (daemon === undefined) throw new CliFailure(`no daemon runs for ${state}, so there is no session ${id} to restart (a console or exec without a daemon runs its session inside itself)`);
    const restore = args.options.has("restore");
    const started = Date.now();
    const done = startProgress(io.stderr, `albedo: restarting the kernel of session ${id}${restore ? " with restore" : ""}`);
    let answer;
    try {
      answer = await daemon.call(API.restart, { params: { id }, body: { restore } });
      done();
    } catch (error) {
      done("albedo: the restart failed");
      throw error;
    }
    if (args.options.has("json")) {
      writeJson(io, answer);
      return 0;
    }
    const took = formatUptime(Date.now() - started);
    io.stdout.write(answer.restore === null
      ? `restarted the kernel of session ${id} empty (${took})\n`
      : `restarted the kernel of session ${id} (${took}): ${visibleControls(answer.restore.summary)}\n`);
    return 0;
  },
};
