import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Daemon } from "../../../src/daemon/index.js";
import { envFor, makeDirs, type Dirs } from "./daemon.js";
import { ScriptedSessions } from "./scriptedSessions.js";

/** A daemon in this process, its sessions scripted (no kernel), every answer checked against its schema. */
export interface InProcessDaemon {
  readonly url: string;
  readonly token: string;
  readonly dirs: Dirs;
  readonly daemon: Daemon;
  readonly sessions: ScriptedSessions;
  close(): Promise<void>;
}

/** Starts the real Daemon (token, store, routes, streams) on loopback with ScriptedSessions behind it. */
export async function startInProcess(dirs?: Dirs): Promise<InProcessDaemon> {
  const made = dirs ?? (await makeDirs());
  const sessions = new ScriptedSessions(made);
  const daemon = await Daemon.start({
    stateDir: made.state,
    home: made.home,
    env: envFor(made),
    listen: { host: "127.0.0.1", port: 0 },
    sessions,
    checkReplies: true,
    log: (level, message) => {
      if (level === "error") process.stderr.write(`in-process daemon: ${message}\n`);
    },
  });
  const token = readFileSync(join(made.state, "daemon.token"), "utf8").trim();
  return {
    url: daemon.url,
    token,
    dirs: made,
    daemon,
    sessions,
    close: async () => {
      await daemon.close();
      if (dirs === undefined) await made.cleanup();
    },
  };
}
