import type { Log } from "../../platform/index.js";
/**
 * `@jupyterlab/services` writes its connection chatter with the global console: every status change
 * ("Kernel: busy (<id>)") and every socket ("Starting WebSocket: …") to stdout through
 * console.debug, and reconnects through console.warn. In a CLI, stdout is the user's program output,
 * (and a comm_close another client caused reaches every client, which services reports with
 * console.error), so those lines are taken off the console once, by their known prefixes, and given to the remote
 * kernels' log hooks instead. Every other console line passes through unchanged.
 */

const SERVICES_LINES = [/^Kernel: /, /^Starting WebSocket: /, /^Connection lost, reconnecting in /, /^Comm not found for comm id /];
const hooks = new Set<Log>();
let installed = false;

/** Routes services' chatter to `log` while the returned function has not been called. */
export function captureServicesConsole(log: Log | undefined): () => void {
  install();
  const hook: Log = log ?? (() => undefined);
  hooks.add(hook);
  return () => hooks.delete(hook);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const method of ["debug", "warn", "log", "error"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const first = args[0];
      if (typeof first === "string" && SERVICES_LINES.some((pattern) => pattern.test(first))) {
        for (const hook of hooks) hook("debug", `jupyter services: ${first}`);
        return;
      }
      original(...args);
    };
  }
}
