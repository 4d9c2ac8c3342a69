/**
 * The web console (W-3): `bundle_kb`, every file of its build gzipped; `first_render_ms`, from
 * opening a fresh login link in chromium to the session list on the page; `row_latency_ms`, from
 * the moment the daemon writes a turn's transcript row (its `at`) to that row's element on the page.
 */
import { execFile } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { call, envFor, makeDirs, ROOT, startDaemon, type DaemonProcess, type Dirs } from "../test/daemon/support/daemon.js";
import { startFakeOpenAI, type FakeOpenAI } from "../test/model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../test/model/support.js";
import { HAVE_CHROMIUM, launchChromium } from "../test/web/browser.js";

import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

/** Goals: the gzipped build, and a row's way from the daemon to the page at p95. */
const BUNDLE_BUDGET_KB = 150;
const ROW_LATENCY_TARGET_MS = 50;
/** Page loads timed (each with its own login link and browser context). */
const RENDERS = 10;
/** Model turns whose rows are timed (two rows each: the user's line and the reply). */
const TURNS = 40;
/** How long the page may take to show one thing. */
const SHOWN_MS = 30_000;

async function bundleKb(): Promise<{ kb: number; files: number }> {
  const dir = join(ROOT, "dist", "web");
  const files: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(at, entry.name));
      else files.push(join(at, entry.name));
    }
  };
  await walk(dir);
  let bytes = 0;
  for (const file of files) bytes += gzipSync(await readFile(file), { level: 9 }).length;
  return { kb: bytes / 1024, files: files.length };
}

/** A fresh one-time login link, from `albedo web --no-browser` as a person gets it. */
async function link(dirs: Dirs): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, "bin", "albedo"), "web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs), timeout: SHOWN_MS });
  return stdout.trim();
}

export async function benchWeb(): Promise<Record<string, unknown>> {
  const bundle = await bundleKb().catch(() => undefined);
  if (bundle === undefined) return { skipped: "no dist/web: run npm run build" };
  const bundleResult = { kb: round(bundle.kb), files: bundle.files, note: "every file of dist/web, gzipped at level 9", ...limitGoal(bundle.kb, BUNDLE_BUDGET_KB) };
  if (!HAVE_CHROMIUM) return { bundle_kb: bundleResult, skipped: "no chromium: apt-get install -y chromium" };
  let dirs: Dirs | undefined;
  let daemon: DaemonProcess | undefined;
  let server: FakeOpenAI | undefined;
  const browser = await launchChromium();
  try {
    server = await startFakeOpenAI();
    dirs = await makeDirs();
    const settings = { model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool" } };
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    if (opened.status !== 201) throw new Error(`POST /sessions answered ${opened.status}`);

    const renders: number[] = [];
    for (let run = 0; run < RENDERS; run++) {
      const url = await link(dirs);
      const context = await browser.newContext();
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(url);
      await page.getByRole("button", { name: dirs.workspace, exact: true }).waitFor({ timeout: SHOWN_MS });
      renders.push(performance.now() - started);
      await context.close();
    }

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(await link(dirs));
    await page.getByLabel("Message").waitFor({ timeout: SHOWN_MS });
    // Each row element's arrival, by the page's clock (the daemon's is the same machine's).
    await page.evaluate(`(() => {
      window.__seen = {};
      new MutationObserver((records) => {
        const now = Date.now();
        for (const record of records) for (const node of record.addedNodes) {
          if (node.dataset && node.dataset.seq && !(node.dataset.seq in window.__seen)) window.__seen[node.dataset.seq] = now;
        }
      }).observe(document.body, { childList: true, subtree: true });
    })()`);
    const box = page.getByLabel("Message");
    for (let turn = 0; turn < TURNS; turn++) {
      server.enqueue({ kind: "reply", text: `reply ${turn}` });
      await box.fill(`message ${turn}`);
      await box.press("Enter");
      await page.locator("[data-kind=assistant]").filter({ hasText: new RegExp(`^model\\s*reply ${turn}$`) }).waitFor({ timeout: SHOWN_MS });
    }
    const seen = (await page.evaluate("window.__seen")) as Record<string, number>;
    const rows = (await call(daemon, "GET", `/sessions/${opened.body.id}/transcript`)).body.rows as { seq: number; at: number }[];
    const latencies = rows.filter((row) => String(row.seq) in seen).map((row) => seen[String(row.seq)]! - row.at);
    await context.close();
    return {
      bundle_kb: bundleResult,
      first_render_ms: { median: round(median(renders)), max: round(Math.max(...renders)), runs: RENDERS, note: "a fresh login link opened in a new chromium context until the session list shows the open session (loopback)" },
      row_latency_ms: {
        p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)), rows: latencies.length,
        note: "a transcript row's `at` (when the daemon wrote it) to its element on the page, over the session's WebSocket; clocks are the same machine's, in whole ms",
        ...limitGoal(percentile(latencies, 95), ROW_LATENCY_TARGET_MS),
      },
    };
  } finally {
    await browser.close();
    if (daemon) {
      daemon.process.kill("SIGTERM");
      await daemon.exited;
    }
    await server?.close();
    await dirs?.cleanup();
  }
}
