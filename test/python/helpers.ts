import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PassThrough, Writable } from "node:stream";
import type { CliIO } from "../../src/cli/plumbing/command.js";

/** The project checkout these tests belong to. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
/** The project's own venv, which has ipykernel 7 and pyzmq. */
export const MAIN_VENV_PYTHON = join(REPO_ROOT, ".venv", "bin", "python");

/** A venv without pip (so without ipykernel) in `dir`; returns its interpreter. */
export function bareVenv(dir: string): string {
  execFileSync("python3", ["-m", "venv", "--without-pip", dir], { stdio: "ignore" });
  return join(dir, "bin", "python");
}

export interface CapturedIO {
  readonly io: CliIO;
  stdout(): string;
  stderr(): string;
}

/** A CLI io whose streams are captured; `tty` marks stderr as a terminal. */
export function captureIO(env: NodeJS.ProcessEnv, cwd: string, tty = false): CapturedIO {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const collector = (into: Buffer[]): Writable =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        into.push(Buffer.from(chunk));
        done();
      },
    });
  const stdout = collector(out);
  const stderr = Object.assign(collector(err), { isTTY: tty });
  return {
    io: { stdout, stderr, stdin: new PassThrough(), env, cwd },
    stdout: () => Buffer.concat(out).toString("utf8"),
    stderr: () => Buffer.concat(err).toString("utf8"),
  };
}

/** process.env without variables that would steer Python, Jupyter or albedo away from the test's choices. */
export function cleanEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["ALBEDO_PYTHON", "ALBEDO_HOME", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_PREFER_ENV_PATH", "IPYTHONDIR", "XDG_DATA_HOME", "PYTHONUSERBASE"]) delete env[name];
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
