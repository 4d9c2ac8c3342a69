import { spawn } from "node:child_process";
import { once } from "node:events";

/** A Python parent that forks a child and never waits for it: killed, the child stays a zombie until the parent ends. */
const HOLDER = `
import os, sys, time
child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)
print(child, flush=True)
sys.stdin.read()
`;

/** A child process whose parent will not reap it, and the way to end both. */
export interface UnreapedChild {
  readonly pid: number;
  /** Ends the parent (the child, zombie or not, goes with it) and waits for it. */
  close(): Promise<void>;
}

export async function unreapedChild(): Promise<UnreapedChild> {
  const holder = spawn("python3", ["-c", HOLDER], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = once(holder, "exit");
  const [line] = (await once(holder.stdout.setEncoding("utf8"), "data")) as [string];
  const pid = Number(line.trim());
  return {
    pid,
    close: async () => {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
      holder.stdin.end();
      await exited;
    },
  };
}
