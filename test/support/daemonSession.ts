/**
 * One daemon with one session open, shared by the tests of a file: the set-up several daemon
 * suites need before they can ask anything of a session. Registers its own beforeAll/afterAll.
 */
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { call, killDaemon, makeDirs, startDaemon, type Answer, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { startInProcess, type InProcessDaemon } from "../daemon/support/inProcess.js";
import { writeSkill } from "./skills.js";

/** Time to start a real daemon and open a session on a real kernel. */
const PROCESS_SESSION_SETUP_MS = 120_000;

export interface DaemonSessionOptions {
  /** Writes a "demo" skill in the workspace's .agents/skills first: `true` for its default body, or the body. */
  readonly demoSkill?: boolean | string;
}

/** What the fixture holds once its beforeAll ran. */
export interface DaemonSession<D> {
  readonly daemon: D;
  readonly dirs: Dirs;
  /** The id of the session opened on `dirs.workspace`. */
  readonly sessionId: string;
  /** The 201 answer of the POST /sessions that opened it. */
  readonly created: Answer;
  /** Opens another session on the workspace in place of one a test closed. */
  reopen(): Promise<void>;
}

/** An `albedo serve` process with real kernels; it gets SIGTERM after the file's tests. */
export function daemonProcessSession(options: DaemonSessionOptions = {}): DaemonSession<DaemonProcess> {
  return sharedSession(
    (dirs) => startDaemon(dirs),
    (daemon) => killDaemon(daemon, "SIGTERM"),
    options,
    PROCESS_SESSION_SETUP_MS,
  );
}

/** The real Daemon in this process with scripted sessions (no kernel); see startInProcess. */
export function inProcessDaemonSession(options: DaemonSessionOptions = {}): DaemonSession<InProcessDaemon> {
  return sharedSession(
    (dirs) => startInProcess(dirs),
    (daemon) => daemon.close(),
    options,
  );
}

function sharedSession<D extends Pick<DaemonProcess, "url" | "token">>(
  start: (dirs: Dirs) => Promise<D>,
  stop: (daemon: D) => Promise<void>,
  options: DaemonSessionOptions,
  timeoutMs?: number,
): DaemonSession<D> {
  let state: DaemonSession<D> | undefined;
  let dirs: Dirs | undefined;
  let daemon: D | undefined;
  const open = async (daemon: D, dirs: Dirs): Promise<void> => {
    const created = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    if (created.status !== 201) throw new Error(`POST /sessions answered ${created.status}: ${JSON.stringify(created.body)}`);
    state = { daemon, dirs, sessionId: created.body.id, created, reopen: () => open(daemon, dirs) };
  };
  beforeAll(async () => {
    dirs = await makeDirs();
    if (options.demoSkill !== undefined && options.demoSkill !== false) {
      writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", typeof options.demoSkill === "string" ? { body: `${options.demoSkill}\n` } : {});
    }
    daemon = await start(dirs);
    await open(daemon, dirs);
  }, timeoutMs);
  afterAll(async () => {
    if (daemon) await stop(daemon);
    await dirs?.cleanup();
  });
  const held = (): DaemonSession<D> => {
    if (state === undefined) throw new Error("the daemon session is used before its beforeAll ran");
    return state;
  };
  return {
    get daemon() {
      return held().daemon;
    },
    get dirs() {
      return held().dirs;
    },
    get sessionId() {
      return held().sessionId;
    },
    get created() {
      return held().created;
    },
    reopen: () => held().reopen(),
  };
}
