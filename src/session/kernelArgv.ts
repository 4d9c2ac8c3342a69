/**
 * What a session asks of the ipykernel it starts, beyond the kernelspec's own command line: the
 * albedo extension (K-3), and two settings that take work off every execute's path (see
 * docs/kernel.md, "Input history").
 */

/** The IPython extension the kernel loads at start (K-3). */
export const KERNEL_EXTENSION = "albedo";

/**
 * IPython's input history lives in memory for the session. By default IPython commits every cell to
 * `history.sqlite` in its profile dir, which costs about as much as the rest of a trivial execute.
 * A sandboxed kernel's home is a scratch dir removed with the session, so that file never outlived
 * it anyway; an unsandboxed one would mix model-written cells into the user's own IPython history.
 * `In`, `Out`, `_i<n>` and `%history` of the session keep working: IPython serves the current
 * session from memory.
 */
export const HISTORY_IN_MEMORY = "--HistoryManager.hist_file=:memory:";

/**
 * ipykernel sleeps 0.5 ms before each execute_reply so that clients which stop at the reply have
 * seen the cell's output. An execution here ends only when the reply AND the `idle` status have
 * arrived, and `idle` follows every output on the same iopub socket, so the sleep buys nothing.
 */
export const NO_REPLY_SLEEP = "--Kernel._execute_sleep=0";

/** Appended to the kernelspec's argv for every local session kernel. */
export const SESSION_KERNEL_ARGV: readonly string[] = ["--ext", KERNEL_EXTENSION, HISTORY_IN_MEMORY, NO_REPLY_SLEEP];

/**
 * The script that starts a session's local kernel, under the install's `kernel` dir: ipykernel's
 * app without its shell channel thread (kernel/albedo/session_kernel.py says why), run by path so
 * the workspace is not on `sys.path` while the kernel loads.
 */
export const SESSION_KERNEL_SCRIPT = "albedo_session_kernel.py";

/** ipykernel's own launcher, as kernelspecs and the managed interpreter run it. */
const IPYKERNEL_LAUNCHER = ["-m", "ipykernel_launcher"] as const;

/**
 * A launch argv with `-m ipykernel_launcher` (the managed interpreter's, and most Python
 * kernelspecs') started through `script` instead; any other command line is returned as it is.
 */
export function withSessionKernelScript(argv: readonly string[], script: string): string[] {
  const at = argv.findIndex((arg, i) => arg === IPYKERNEL_LAUNCHER[0] && argv[i + 1] === IPYKERNEL_LAUNCHER[1]);
  return at < 0 ? [...argv] : [...argv.slice(0, at), script, ...argv.slice(at + 2)];
}
