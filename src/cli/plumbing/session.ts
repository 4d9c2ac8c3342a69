import { Session } from "../../session/index.js";
import { stringOption, UsageError, type ParsedArgs } from "./args.js";
import { SANDBOX_MODES, type SandboxMode } from "../../sandbox/index.js";
import { remoteUrlProblem } from "../../kernel/index.js";
import type { CliIO } from "./command.js";
import { startProgress } from "../terminal/progress.js";
import { workspaceOf } from "./workspace.js";
import { homeDir, stateDir } from "../../platform/index.js";
import { checkNetworkSetting, type NetworkSetting } from "../../network/index.js";

/** Opens an in-process session (D-5) with boot progress on a terminal's stderr. */
export async function openEmbeddedSession(args: ParsedArgs, io: CliIO): Promise<Session> {
  const workspace = await workspaceOf(args, io);
  const sandbox = sandboxOf(args);
  const remote = remoteOf(args);
  const network = networkOf(args);
  const done = startProgress(io.stderr, remote ? `albedo: starting a kernel on ${remote.url}` : "albedo: starting the kernel");
  try {
    const session = await Session.open({
      workspace,
      home: homeDir(io.env),
      stateDir: stateDir(io.env),
      env: io.env,
      ...(sandbox ? { sandbox } : {}),
      ...(remote ? { remote } : {}),
      ...(resumeOf(args) !== undefined ? { resume: resumeOf(args)! } : {}),
      ...(network !== undefined ? { network } : {}),
      onProgress: (message) => done.update(`albedo: ${message}`),
      log: (level, message, data) => {
        if (level === "warn" || level === "error") done.note(`albedo ${level}: ${message}${data ? ` ${JSON.stringify(data)}` : ""}`);
      },
    });
    done();
    return session;
  } catch (error) {
    done("albedo: the kernel did not start");
    throw error;
  }
}

/** The --remote override, when given; a URL that cannot name a server is a usage error. */
export function remoteOf(args: ParsedArgs): { url: string } | undefined {
  const url = stringOption(args, "remote");
  if (url === undefined) return undefined;
  const problem = remoteUrlProblem(url);
  if (problem) throw new UsageError(`--remote ${problem}`);
  return { url };
}

/** The --resume session id, when given. */
export function resumeOf(args: ParsedArgs): string | undefined {
  const id = stringOption(args, "resume");
  if (id !== undefined && !/^[0-9a-f]{1,64}$/.test(id)) throw new UsageError(`--resume takes a session id (hex, as \`albedo sessions\` lists them), got "${id}"`);
  return id;
}

/**
 * The --network policy of this session, when given: `off`, `on`, a JSON object, or patterns
 * separated by commas (a policy that allows just those); checked as the setting is, each problem
 * a usage error naming it.
 */
export function networkOf(args: ParsedArgs): NetworkSetting | undefined {
  const given = stringOption(args, "network");
  if (given === undefined) return undefined;
  const text = given.trim();
  let value: unknown;
  if (text === "off" || text === "false") value = false;
  else if (text === "on" || text === "true") value = true;
  else if (text.startsWith("{")) {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`--network: ${JSON.stringify(text.slice(0, 60))} is not JSON (${(error as Error).message})`);
    }
  } else value = { allow: text.split(",").map((pattern) => pattern.trim()).filter((pattern) => pattern !== "") };
  const checked = checkNetworkSetting(value);
  if (!checked.ok) throw new UsageError(`--network: ${checked.problems.map((problem) => `${problem.path === "" ? "" : `${problem.path}: `}${problem.message}`).join("; ")}`);
  return checked.setting;
}

/** The --sandbox override, when given; a value outside auto|required|off is a usage error. */
export function sandboxOf(args: ParsedArgs): SandboxMode | undefined {
  const given = stringOption(args, "sandbox");
  if (given === undefined) return undefined;
  if (!(SANDBOX_MODES as readonly string[]).includes(given)) throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, got "${given}"`);
  return given as SandboxMode;
}

