/**
 * Errors of remote kernels, typed at the boundary (the Jupyter Server's REST API and WebSocket):
 * callers read `code`, and the message names what to do. The token never appears in one, not even
 * when the server echoes it.
 */
import { jupyterServices } from "../packages.js";
import { quoteRemote } from "./quote.js";
import type { RemoteKernelOptions } from "./settings.js";

export type RemoteKernelErrorCode =
  | "unreachable" // no answer at the URL (connection refused, DNS, TLS, deadline)
  | "unauthorized" // 401/403: the token is missing or wrong
  | "kernelspec" // the server has no such kernelspec
  | "too_old" // the kernel's ipykernel cannot serve the comm channel
  | "bootstrap" // the kernel package did not load, or the comm did not come up
  | "server"; // any other refusal from the server

export class RemoteKernelError extends Error {
  override readonly name = "RemoteKernelError";
  constructor(readonly code: RemoteKernelErrorCode, message: string, readonly status?: number) {
    super(message);
  }
}

/** Turns what a services REST call threw into a RemoteKernelError naming `what` and the server; what the server said is quoted (quoteRemote). */
export async function remoteErrorOf(error: unknown, what: string, remote: Pick<RemoteKernelOptions, "url" | "token" | "tokenEnv">): Promise<RemoteKernelError> {
  if (error instanceof RemoteKernelError) return error;
  const { url, tokenEnv } = remote;
  const quote = (text: string) => quoteRemote(text, [remote.token]);
  const { ServerConnection } = jupyterServices();
  if (error instanceof ServerConnection.ResponseError) {
    const status = error.response.status;
    if (status === 401 || status === 403) {
      return new RemoteKernelError("unauthorized", `${what}: ${url} refused the token (HTTP ${status}); set ${tokenEnv} to the server's token`, status);
    }
    return new RemoteKernelError("server", `${what}: ${url} answered HTTP ${status}: ${quote(error.message)}`, status);
  }
  if (error instanceof ServerConnection.NetworkError) {
    return new RemoteKernelError("unreachable", `${what}: cannot reach ${url}: ${quote(causeOf(error))}`);
  }
  return new RemoteKernelError("server", `${what}: ${quote(error instanceof Error ? error.message : String(error))}`);
}

function causeOf(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? ((cause as { cause?: unknown }).cause ?? cause) : cause;
  return inner instanceof Error ? `${(inner as NodeJS.ErrnoException).code ?? inner.name}: ${inner.message}` : error.message;
}
