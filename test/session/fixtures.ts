import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { Session, type SessionOptions } from "../../src/session/index.js";
import { tempDir } from "../support/tempDirs.js";

/** A temp workspace, home and state dir for one session test; `cleanup` removes them. */
export interface SessionDirs {
  readonly root: string;
  readonly workspace: string;
  readonly home: string;
  readonly stateDir: string;
  cleanup(): Promise<void>;
}

export async function sessionDirs(): Promise<SessionDirs> {
  // Short prefix: IPC socket paths live under the state dir and Unix limits them to ~107 bytes.
  const { dir: root, remove } = tempDir("alb-");
  const dirs = { root, workspace: join(root, "ws"), home: join(root, "home"), stateDir: join(root, "state") };
  for (const dir of [dirs.workspace, dirs.home, dirs.stateDir]) mkdirSync(dir);
  return { ...dirs, cleanup: async () => remove() };
}

/** Opens a session on the dirs, with the test's environment. */
export function openSession(dirs: SessionDirs, extra: Partial<SessionOptions> = {}): Promise<Session> {
  return Session.open({
    workspace: dirs.workspace,
    home: dirs.home,
    stateDir: dirs.stateDir,
    env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir },
    ...extra,
  });
}

/** Runs code and returns its stdout text; throws with the traceback when the cell fails. */
export async function run(session: Session, code: string): Promise<string> {
  const future = session.kernel.execute(code);
  let out = "";
  const errors: string[] = [];
  future.onOutput((output) => {
    const content = output.content as { name?: string; text?: string; data?: Record<string, string>; ename?: string; evalue?: string };
    if (output.header.msg_type === "stream" && content.name === "stdout") out += content.text ?? "";
    if (output.header.msg_type === "execute_result") out += `${content.data?.["text/plain"] ?? ""}\n`;
    if (output.header.msg_type === "error") errors.push(`${content.ename}: ${content.evalue}`);
  });
  const reply = await future.done;
  if (reply.status !== "ok") throw new Error(`cell failed: ${errors.join("\n") || reply.status}`);
  return out;
}

/**
 * Sessions opened by `open` in a test are closed, and their dirs removed, after it (this registers
 * the afterEach). `prepare` runs on the fresh dirs before the session opens (to write skills, say).
 */
export function sessionsPerTest(): { open(prepare?: (dirs: SessionDirs) => unknown, extra?: Partial<SessionOptions>): Promise<{ session: Session; dirs: SessionDirs }> } {
  const opened: { session?: Session; dirs: SessionDirs }[] = [];
  afterEach(async () => {
    for (const { session, dirs } of opened.splice(0)) {
      await session?.close();
      await dirs.cleanup();
    }
  });
  return {
    async open(prepare, extra = {}) {
      const entry: { session?: Session; dirs: SessionDirs } = { dirs: await sessionDirs() };
      opened.push(entry);
      await prepare?.(entry.dirs);
      entry.session = await openSession(entry.dirs, extra);
      return { session: entry.session, dirs: entry.dirs };
    },
  };
}
