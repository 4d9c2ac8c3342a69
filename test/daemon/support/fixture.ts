/**
 * Per-test `albedo serve` processes and their dirs: a suite calls daemonFixture() once, each test
 * gets fresh dirs and starts what it needs, and after each test every daemon it started is stopped
 * and every dir removed. Apart from daemon.ts because that module is compiled for the bench, and
 * this one registers vitest hooks.
 */
import { afterEach, beforeEach } from "vitest";
import { killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "./daemon.js";

export interface DaemonFixtureOptions {
  /** How each daemon is stopped after its test: SIGTERM (the default) closes its sessions first; SIGKILL when it may be stuck. */
  readonly signal?: NodeJS.Signals;
}

/** Where and how `start` runs `albedo serve`. */
export interface StartOptions {
  /** Dirs to serve instead of the test's own (a suite's shared dirs, or more from `makeDirs`). */
  readonly dirs?: Dirs;
  /** A program to run it through, as startDaemon's `wrap` (a umask, prlimit). */
  readonly wrap?: readonly string[];
}

export interface DaemonFixture {
  /** The current test's dirs, made before it; throws outside a test. */
  readonly dirs: Dirs;
  /** More dirs for the current test, removed after it. */
  makeDirs(): Promise<Dirs>;
  /** Starts `albedo serve` as startDaemon does (its default args when `args` is undefined), on the test's dirs unless `options.dirs`; stopped after the test. */
  start(args?: readonly string[], env?: NodeJS.ProcessEnv, options?: StartOptions): Promise<DaemonProcess>;
}

/** Registers the beforeEach that makes each test's dirs and the afterEach that stops its daemons, then removes its dirs. */
export function daemonFixture(options: DaemonFixtureOptions = {}): DaemonFixture {
  const running: DaemonProcess[] = [];
  const made: Dirs[] = [];
  let current: Dirs | undefined;
  const more = async (): Promise<Dirs> => {
    const dirs = await makeDirs();
    made.push(dirs);
    return dirs;
  };
  const own = (): Dirs => {
    if (current === undefined) throw new Error("daemonFixture().dirs is read outside a test");
    return current;
  };
  beforeEach(async () => {
    current = await more();
  });
  afterEach(async () => {
    for (const daemon of running.splice(0)) await killDaemon(daemon, options.signal ?? "SIGTERM");
    for (const dirs of made.splice(0)) await dirs.cleanup();
    current = undefined;
  });
  return {
    get dirs() {
      return own();
    },
    makeDirs: more,
    async start(args, env, { dirs, wrap } = {}) {
      const daemon = await startDaemon(dirs ?? own(), args, env, wrap);
      running.push(daemon);
      return daemon;
    },
  };
}
