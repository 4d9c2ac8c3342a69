// What the install scripts say while they work. npm keeps a script's output to itself unless the
// script fails (or --foreground-scripts is given), so `npm install` and `npm link` would be silent
// for the minute the build and `albedo setup` take: each line goes to stderr (npm's log, shown on a
// failure) and, when stderr is not a terminal, also to the terminal npm runs on (/dev/tty), if any.
import { closeSync, openSync, writeSync } from "node:fs";

let tty;
function terminal() {
  if (tty !== undefined) return tty;
  tty = null;
  if (process.stderr.isTTY) return tty;
  try {
    tty = openSync("/dev/tty", "w");
    process.once("exit", () => closeSync(tty));
  } catch {
    tty = null; // no controlling terminal: a CI job, a container without one
  }
  return tty;
}

/** Writes `text` (whole lines) to stderr and to the terminal npm hides it from. */
export function show(text) {
  process.stderr.write(text);
  const fd = terminal();
  if (fd !== null) {
    try {
      writeSync(fd, text);
    } catch {
      // the terminal went away: stderr has the line
    }
  }
}

/** One line, prefixed "albedo: ". */
export function say(line) {
  show(`albedo: ${line}\n`);
}
