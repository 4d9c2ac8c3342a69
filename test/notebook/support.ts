/** A kernel started from the installed "albedo" kernelspec, as Jupyter would start it, and cells run on it. */
import { spawnSync } from "node:child_process";
import { expect } from "vitest";
import { join } from "node:path";
import { resolveKernelLaunch, startKernel, type KernelClient } from "../../src/kernel/index.js";
import { ROOT } from "../daemon/support/daemon.js";
import { testPython } from "../kernel/python.js";

export const BIN = join(ROOT, "bin", "albedo");

/** Runs the CLI to its end. */
export function albedo(args: readonly string[], env: NodeJS.ProcessEnv = process.env): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { env: { ALBEDO_PYTHON: testPython(), ...env }, encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Installs the kernelspec under `<root>/p`; returns the env that makes Jupyter (and albedo) find it. */
export function installSpec(root: string): NodeJS.ProcessEnv {
  const result = albedo(["kernelspec", "install", "--prefix", join(root, "p")]);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return { ...process.env, JUPYTER_PATH: join(root, "p", "share", "jupyter") };
}

/** Starts a kernel from a kernelspec (default the installed "albedo"); stderr lines are collected. `cleanups` gets its shutdown. */
export async function startSpecKernel(
  env: NodeJS.ProcessEnv,
  cwd: string,
  runDir: string,
  extraEnv: Record<string, string>,
  cleanups: Array<() => Promise<void>>,
  kernelspec = "albedo",
): Promise<{ kernel: KernelClient; stderr: () => string }> {
  const launch = await resolveKernelLaunch({ kernelspec }, env);
  let stderr = "";
  const kernel = await startKernel({
    spec: launch,
    runDir,
    cwd,
    extraEnv,
    log: (_level, message, data) => {
      if (message === "kernel stderr") stderr += String(data?.text ?? "");
    },
  });
  cleanups.push(() => kernel.shutdown());
  return { kernel, stderr: () => stderr };
}

/** What a cell showed: streams and error lines as `text`, its displayed values by MIME type, and the pages `obj?` sent. */
export interface Cell {
  readonly status: string;
  readonly text: string;
  readonly displays: Record<string, string>[];
  readonly traceback: string;
  readonly pages: string[];
}

/** Runs one cell to its end. */
export async function runCell(kernel: KernelClient, code: string): Promise<Cell> {
  let text = "";
  let traceback = "";
  const displays: Record<string, string>[] = [];
  const future = kernel.execute(code);
  future.onOutput((output) => {
    const content = output.content as { text?: string; ename?: string; evalue?: string; traceback?: string[]; data?: Record<string, string> };
    const type = output.header.msg_type;
    if (type === "stream") text += content.text ?? "";
    if (type === "error") {
      text += `${content.ename}: ${content.evalue}`;
      // eslint-disable-next-line no-control-regex
      traceback = (content.traceback ?? []).join("\n").replace(/\u001b\[[0-9;]*m/g, "");
    }
    if ((type === "execute_result" || type === "display_data") && content.data) displays.push(content.data);
  });
  const reply = await future.done;
  const payload = ((reply as { payload?: { source?: string; data?: Record<string, string> }[] }).payload ?? []);
  // eslint-disable-next-line no-control-regex
  const pages = payload.filter((p) => p.source === "page").map((p) => String(p.data?.["text/plain"] ?? "").replace(/\u001b\[[0-9;]*m/g, ""));
  return { status: reply.status, text, displays, traceback, pages };
}

/** Runs one cell; only its status and text. */
export async function run(kernel: KernelClient, code: string): Promise<{ status: string; text: string }> {
  const { status, text } = await runCell(kernel, code);
  return { status, text };
}
