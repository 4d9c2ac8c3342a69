/** Temp dirs, skills and sessions for the kernel benches, and a cell's printed text. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "../src/session/index.js";

export interface BenchDirs { root: string; workspace: string; home: string; state: string; remove(): Promise<void> }

/** A workspace, home and state dir under one short temp root (IPC socket paths live under it). */
export async function benchDirs(prefix = "alb-bench-"): Promise<BenchDirs> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const dirs = { root, workspace: join(root, "ws"), home: join(root, "home"), state: join(root, "st") };
  await Promise.all([mkdir(dirs.workspace), mkdir(dirs.home), mkdir(dirs.state)]);
  return { ...dirs, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Writes `count` skills named skill-000, skill-001, ... into the workspace. */
export async function writeSkills(workspace: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = `skill-${String(i).padStart(3, "0")}`;
    const dir = join(workspace, ".albedo", "skills", name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: Bench skill ${i}.\n---\n${"Step.\n".repeat(50)}`);
  }
}

/** Opens a session on the dirs, as the embedded runtime does. */
export function openSession(dirs: BenchDirs): Promise<Session> {
  return Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home } });
}

/** Runs `code` and returns what it printed; throws with the error when the cell fails. */
export async function cellText(session: Session, code: string): Promise<string> {
  const future = session.kernel.execute(code);
  let out = "";
  let error = "";
  future.onOutput((o) => {
    if (o.header.msg_type === "stream") out += (o.content as { text: string }).text;
    if (o.header.msg_type === "error") error = `${(o.content as { ename: string }).ename}: ${(o.content as { evalue: string }).evalue}`;
  });
  const reply = await future.done;
  if (reply.status !== "ok") throw new Error(`bench cell failed (${error}): ${code.slice(0, 80)}`);
  return out;
}

/** The JSON a cell printed on its last line. */
export async function cellJson<T>(session: Session, code: string): Promise<T> {
  return JSON.parse((await cellText(session, code)).trim().split("\n").at(-1)!) as T;
}
