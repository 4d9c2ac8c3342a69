/**
 * Debian's chromium, driven by playwright-core (no browser download): the flags keep it off the
 * network it would otherwise call home on, and `--no-sandbox` lets it run as root in CI.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { envFor, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { runAlbedo } from "../support/cli.js";

export const CHROMIUM = process.env.ALBEDO_TEST_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
/** Longest chromium may take to start. */
const LAUNCH_TIMEOUT_MS = 30_000;

/** Starts chromium; in CI a missing one fails the run instead of skipping the browser tests. */
export async function launchChromium(): Promise<Browser> {
  if (!HAVE_CHROMIUM) throw new Error(`no chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or point ALBEDO_TEST_CHROMIUM at one`);
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: LAUNCH_TIMEOUT_MS });
}

/** Whether the browser suites run: chromium is there, or CI requires them (and launchChromium then fails loudly). */
export const RUN_BROWSER_TESTS = HAVE_CHROMIUM || process.env.CI === "true";

/** A daemon on loopback with its own state and workspace, and chromium with one page, for one suite. */
export interface WebRig {
  readonly dirs: Dirs;
  readonly daemon: DaemonProcess;
  readonly browser: Browser;
  readonly page: Page;
  /** Opens a one-time login link from `albedo web` in the page. */
  logIn(): Promise<void>;
  /** Ends the browser and the daemon, and removes the directories. */
  close(): Promise<void>;
}

export async function startWebRig(): Promise<WebRig> {
  const dirs = await makeDirs();
  const daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
  const browser = await launchChromium();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  return {
    dirs,
    daemon,
    browser,
    page,
    logIn: async () => {
      const link = await runAlbedo(["web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs) });
      await page.goto(link.stdout.trim());
    },
    close: async () => {
      await browser.close();
      await killDaemon(daemon, "SIGTERM");
      await dirs.cleanup();
    },
  };
}
