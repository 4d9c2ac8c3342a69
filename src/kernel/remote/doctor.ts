/**
 * `albedo doctor --remote URL` (K-12): is the server there, does it take the token, does it have
 * the kernelspec, and is that kernel's ipykernel new enough for the comm channel. Each check has
 * a fix; the kernel started for the last one is shut down again.
 */
import { jupyterServices } from "../packages.js";
import { checkKernelInfo } from "./bootstrap.js";
import { startRemoteKernel } from "./client.js";
import { withDeadline } from "./deadline.js";
import { remoteErrorOf, RemoteKernelError } from "./errors.js";
import { quoteRemote } from "./quote.js";
import { MIN_IPYKERNEL_VERSION, REMOTE_REQUEST_TIMEOUT_MS } from "./limits.js";
import { serverSettings } from "./server.js";
import type { RemoteKernelOptions } from "./settings.js";

export interface RemoteCheck {
  readonly name: string;
  readonly status: "ok" | "warn" | "fail";
  readonly detail: string;
  readonly fix: string | null;
}

const VERSION_EXPRESSION = "__import__('ipykernel').__version__";

/** Runs the checks in order; a failed one ends the list (the next would only fail the same way). */
export async function remoteDoctor(remote: RemoteKernelOptions): Promise<RemoteCheck[]> {
  const checks: RemoteCheck[] = [];
  for (const check of [reachable, specs, ipykernelVersion]) {
    const result = await check(remote);
    checks.push(...result);
    if (result.some((item) => item.status === "fail")) break;
  }
  return checks;
}

async function reachable(remote: RemoteKernelOptions): Promise<RemoteCheck[]> {
  const settings = serverSettings(remote);
  try {
    const response = await jupyterServices().ServerConnection.makeRequest(`${remote.url}api`, {}, settings);
    const body = (await response.json().catch(() => ({}))) as { version?: unknown };
    const version = typeof body.version === "string" ? quoteRemote(body.version, [remote.token]) : "unknown";
    return [ok("remote server", `${remote.url} answers (server version ${version})`)];
  } catch (error) {
    const failure = await remoteErrorOf(error, "GET /api", remote);
    return [fail("remote server", failure.message, "check the URL and that the server runs and listens where this machine can reach it")];
  }
}

async function specs(remote: RemoteKernelOptions): Promise<RemoteCheck[]> {
  const auth = remote.token
    ? ok("remote auth", `the token from ${remote.tokenEnv} is accepted`)
    : { name: "remote auth", status: "warn" as const, detail: `${remote.tokenEnv} is empty: no token is sent`, fix: `export ${remote.tokenEnv}=<the server's token> unless the server runs without authentication` };
  try {
    const found = await withDeadline(jupyterServices().KernelSpecAPI.getSpecs(serverSettings(remote)), REMOTE_REQUEST_TIMEOUT_MS, "GET /api/kernelspecs", "REMOTE_REQUEST_TIMEOUT_MS");
    const names = Object.keys(found.kernelspecs);
    const quote = (text: unknown) => quoteRemote(String(text ?? ""), [remote.token]);
    if (!names.includes(remote.kernelName)) {
      return [auth, fail("remote kernelspec", `no kernelspec ${remote.kernelName} on the server (it has ${quote(names.join(", ")) || "none"})`, "set kernel.remote.kernel_name to one of those, or install the kernelspec on the server")];
    }
    return [auth, ok("remote kernelspec", `${remote.kernelName} (${quote(found.kernelspecs[remote.kernelName]?.display_name)})`)];
  } catch (error) {
    const failure = await remoteErrorOf(error, "GET /api/kernelspecs", remote);
    if (failure.code === "unauthorized") return [fail("remote auth", failure.message, `export ${remote.tokenEnv}=<the server's token>, or set kernel.remote.token_env to the variable that holds it`)];
    return [auth, fail("remote kernelspec", failure.message, "check the server's log")];
  }
}

async function ipykernelVersion(remote: RemoteKernelOptions): Promise<RemoteCheck[]> {
  const fix = `use a kernel (or an Enterprise Gateway KERNEL_IMAGE) with ipykernel >= ${MIN_IPYKERNEL_VERSION}: pip install 'ipykernel>=${MIN_IPYKERNEL_VERSION}'`;
  let kernel;
  try {
    kernel = await startRemoteKernel({ remote });
  } catch (error) {
    const failure = error instanceof RemoteKernelError ? error : await remoteErrorOf(error, "kernel start", remote);
    return [fail("remote kernel", failure.message, "see the server's log for why the kernel did not start")];
  }
  try {
    checkKernelInfo(kernel.info);
    const reply = await kernel.execute("", { silent: true, storeHistory: false, userExpressions: { version: VERSION_EXPRESSION } }).done;
    const found = (reply as { user_expressions?: Record<string, { data?: Record<string, string> }> }).user_expressions?.version?.data?.["text/plain"]?.replace(/'/g, "") ?? "unknown";
    if (older(found, MIN_IPYKERNEL_VERSION)) return [fail("remote ipykernel", `ipykernel ${found} on the kernel; albedo needs >= ${MIN_IPYKERNEL_VERSION}`, fix)];
    return [ok("remote ipykernel", `ipykernel ${found} (comm messages are served while a cell awaits)`)];
  } catch (error) {
    return [fail("remote ipykernel", error instanceof Error ? error.message : String(error), fix)];
  } finally {
    await kernel.shutdown();
  }
}

/** Whether dotted version `found` is below `minimum` (numeric parts compared in order). */
export function older(found: string, minimum: string): boolean {
  const parts = (text: string) => text.split(".").map((part) => Number.parseInt(part, 10) || 0);
  const [a, b] = [parts(found), parts(minimum)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}

const ok = (name: string, detail: string): RemoteCheck => ({ name, status: "ok", detail, fix: null });
const fail = (name: string, detail: string, fix: string): RemoteCheck => ({ name, status: "fail", detail, fix });
