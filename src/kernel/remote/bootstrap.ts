/**
 * Loads the albedo kernel package into a remote kernel without an install on its host (K-12): one
 * silent execute (`silent: true, store_history: false`, so no history entry, no execution count,
 * no output) runs kernel/albedo/_bootstrap.py with the package's source, which the runtime reads
 * from its own install. The bootstrap checks ipykernel's version and registers the comm target.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ExecuteFuture } from "../future.js";
import type { ExecuteOptions, KernelInfo } from "../kernel.js";
import { withDeadline } from "./deadline.js";
import { RemoteKernelError } from "./errors.js";
import { MIN_IPYKERNEL_VERSION, REMOTE_BOOTSTRAP_TIMEOUT_MS } from "./limits.js";
import { quoteRemote } from "./quote.js";

/** The exception _bootstrap.py raises for an ipykernel older than MIN_IPYKERNEL_VERSION. */
export const TOO_OLD_ENAME = "IpykernelTooOld";
const BOOTSTRAP_MODULE = "_bootstrap";
/** The feature ipykernel 7 reports in kernel_info; without it (6.x, other kernels) there is no subshell for blocking calls. */
const SUBSHELLS_FEATURE = "kernel subshells";

/** What the bootstrap needs from a kernel: a way to run code before the kernel counts as ready. */
export interface BootTarget {
  executeDuringBoot(code: string, options?: ExecuteOptions): ExecuteFuture;
}

/** The package's modules by dotted name (`albedo`, `albedo._comm`, …), read from `<kernelDir>/albedo`. */
export async function packageSources(kernelDir: string): Promise<Record<string, string>> {
  const dir = join(kernelDir, "albedo");
  const files = (await readdir(dir)).filter((name) => name.endsWith(".py")).sort();
  const entries = await Promise.all(files.map(async (file) => {
    const module = file === "__init__.py" ? "albedo" : `albedo.${file.slice(0, -3)}`;
    return [module, await readFile(join(dir, file), "utf8")] as const;
  }));
  return Object.fromEntries(entries);
}

/** The cell text: runs the bootstrap module in a fresh globals dict, so the user's namespace gains nothing. */
export function bootstrapCode(sources: Readonly<Record<string, string>>, secret: string): string {
  const bootstrap = sources[`albedo.${BOOTSTRAP_MODULE}`];
  if (bootstrap === undefined) throw new Error(`the kernel package has no ${BOOTSTRAP_MODULE}.py`);
  // A JSON string literal is a valid Python string literal, so the texts travel as JSON inside Python.
  const json = (value: unknown) => `__import__("json").loads(${JSON.stringify(JSON.stringify(value))})`;
  const globals = `{"__name__": "albedo._bootstrap", "SOURCES": ${json(sources)}, "SECRET_SHA256": ${JSON.stringify(secretDigest(secret))}}`;
  return `__import__("builtins").exec(compile(${json(bootstrap)}, "<albedo bootstrap>", "exec"), ${globals})`;
}

/** What the kernel compares a comm's secret against: the kernel is never sent the secret in code. */
export function secretDigest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Throws RemoteKernelError("too_old") when kernel_info shows a kernel that cannot serve the comm channel. */
export function checkKernelInfo(info: KernelInfo | undefined): void {
  if (info?.implementation !== "ipython") {
    throw new RemoteKernelError("too_old", `the remote kernel is ${quoteRemote(String(info?.implementation ?? "unknown"), [])}, not an IPython kernel; albedo needs ipykernel >= ${MIN_IPYKERNEL_VERSION}`);
  }
  if (!(info.supported_features ?? []).includes(SUBSHELLS_FEATURE)) {
    throw new RemoteKernelError("too_old", `the remote kernel's ipykernel has no subshells (ipykernel 6.x or older); albedo needs ipykernel >= ${MIN_IPYKERNEL_VERSION}`);
  }
}

/** Runs the bootstrap in `kernel`; throws RemoteKernelError("too_old" | "bootstrap") with the kernel's own words. */
export async function bootstrapKernel(kernel: BootTarget, sources: Readonly<Record<string, string>>, secret: string): Promise<void> {
  const future = kernel.executeDuringBoot(bootstrapCode(sources, secret), { silent: true, storeHistory: false });
  const reply = await withDeadline(future.done, REMOTE_BOOTSTRAP_TIMEOUT_MS, "the bootstrap execute", "REMOTE_BOOTSTRAP_TIMEOUT_MS");
  if (reply.status === "ok") return;
  const error = reply as { ename?: string; evalue?: string };
  const code = error.ename === TOO_OLD_ENAME ? "too_old" : "bootstrap";
  throw new RemoteKernelError(code, code === "too_old" ? String(error.evalue) : `the albedo kernel package did not load: ${error.ename}: ${error.evalue}`);
}
