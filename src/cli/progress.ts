/** How often a terminal progress line is redrawn. */
export const PROGRESS_TICK_MS = 250;

/**
 * Shows a waiting message with elapsed seconds on a terminal, redrawn in place; prints nothing when
 * the stream is not a terminal (piped output stays clean). Returns a function that ends the wait.
 */
export function startProgress(stream: NodeJS.WritableStream & { isTTY?: boolean }, message: string): (outcome?: string) => void {
  if (!stream.isTTY) return () => undefined;
  const started = Date.now();
  let text = message;
  const draw = () => stream.write(`\r\u001b[2K${text} ${((Date.now() - started) / 1000).toFixed(1)}s`);
  draw();
  const timer = setInterval(draw, PROGRESS_TICK_MS);
  const stop = (outcome?: string) => {
    clearInterval(timer);
    stream.write(`\r\u001b[2K${outcome ? `${outcome}\n` : ""}`);
  };
  return Object.assign(stop, { update: (next: string) => (text = next) });
}
