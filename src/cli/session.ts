import { Session } from "../session/index.js";
import { homeDir, stateDir } from "../settings/paths.js";
import type { ParsedArgs } from "./args.js";
import type { CliIO } from "./command.js";
import { startProgress } from "./progress.js";
import { workspaceOf } from "./workspace.js";

/** Opens an in-process session (D-5) with boot progress on a terminal's stderr. */
export async function openEmbeddedSession(args: ParsedArgs, io: CliIO): Promise<Session> {
  const workspace = await workspaceOf(args, io);
  const done = startProgress(io.stderr, "albedo: starting the kernel");
  try {
    const session = await Session.open({
      workspace,
      home: homeDir(io.env),
      stateDir: stateDir(io.env),
      env: io.env,
      log: (level, message, data) => {
        if (level === "warn" || level === "error") io.stderr.write(`albedo ${level}: ${message}${data ? ` ${JSON.stringify(data)}` : ""}\n`);
      },
    });
    done();
    return session;
  } catch (error) {
    done("albedo: the kernel did not start");
    throw error;
  }
}
