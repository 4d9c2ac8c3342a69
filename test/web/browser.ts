/**
 * Debian's chromium, driven by playwright-core (no browser download): the flags keep it off the
 * network it would otherwise call home on, and `--no-sandbox` lets it run as root in CI.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

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
