/** How often a terminal progress line is redrawn. */
export const PROGRESS_TICK_MS = 250;
/** A wait shorter than this shows nothing: a line that flashes and vanishes only distracts. */
export const PROGRESS_DELAY_MS = 1_000;

/** Ends a wait: with `outcome`, that line stays on the terminal. */
/** `note` prints a line of its own above the progress line (a warning met while waiting), never glued to it. */
export type ProgressDone = ((outcome?: string) => void) & { update(next: string): void; note(line: string): void };

/**
 * Shows a waiting message with elapsed seconds on a terminal once the wait passes
 * PROGRESS_DELAY_MS, redrawn in place; prints nothing when the stream is not a terminal (piped
 * output stays clean). Returns a function that ends the wait.
 */
export function startProgress(stream: NodeJS.WritableStream & { isTTY?: boolean }, message: string): ProgressDone {
  let text = message;
  if (!stream.isTTY) return Object.assign(() => undefined, { update: (next: string) => void (text = next), note: (line: string) => void stream.write(`${line}\n`) });
  const started = Date.now();
  let shown = false;
  const draw = () => {
    shown = true;
    stream.write(`\r\u001b[2K${text} ${((Date.now() - started) / 1000).toFixed(1)}s`);
  };
  let timer: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    draw();
    timer = setInterval(draw, PROGRESS_TICK_MS);
  }, PROGRESS_DELAY_MS);
  const stop = (outcome?: string) => {
    clearTimeout(delay);
    clearInterval(timer);
    if (shown) stream.write("\r\u001b[2K");
    if (outcome) stream.write(`${outcome}\n`);
  };
  const note = (line: string) => {
    stream.write(`${shown ? "\r\u001b[2K" : ""}${line}\n`);
    if (shown) draw();
  };
  return Object.assign(stop, { update: (next: string) => void (text = next), note });
}

/** Runs `work` with a progress line on `stream` while it lasts; the line goes when it settles. */
export async function withProgress<T>(stream: NodeJS.WritableStream & { isTTY?: boolean }, message: string, work: () => Promise<T>): Promise<T> {
  const done = startProgress(stream, message);
  try {
    return await work();
  } finally {
    done();
  }
}
