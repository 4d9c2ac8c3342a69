/**
 * matplotlib in a sandboxed kernel: a read-only system, a scratch home, no display. A plot shown
 * with the inline backend must arrive as an image/png display_data that the images domain keeps,
 * with nothing on stderr about an unwritable config or font cache, and no GUI backend tried.
 */
import { existsSync, readdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkImage } from "../../src/images/index.js";
import { SCRATCH_DIRS } from "../../src/sandbox/plan.js";
import { SANDBOX_PLOT_ENV } from "../../src/sandbox/profile.js";
import { sandboxEnv } from "../../src/sandbox/index.js";
import type { Session } from "../../src/session/index.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";

/** The test venv's interpreter: it has matplotlib, the managed one does not. */
const PYTHON = TEST_VENV_PYTHON;
const HAVE_MATPLOTLIB = HAVE_TEST_VENV;

interface Outputs {
  readonly stderr: string;
  readonly stdout: string;
  readonly bundles: Record<string, unknown>[];
  readonly errors: string[];
}

/** Runs `code` and gathers its outputs: stream text by name, display bundles, errors. */
async function outputsOf(session: Session, code: string): Promise<Outputs> {
  const future = session.execute(code);
  const out = { stderr: "", stdout: "", bundles: [] as Record<string, unknown>[], errors: [] as string[] };
  future.onOutput((output) => {
    const content = output.content as { name?: string; text?: string; data?: Record<string, unknown>; ename?: string; evalue?: string };
    if (output.header.msg_type === "stream") out[content.name === "stderr" ? "stderr" : "stdout"] += content.text ?? "";
    if ((output.header.msg_type === "display_data" || output.header.msg_type === "execute_result") && content.data) out.bundles.push(content.data);
    if (output.header.msg_type === "error") out.errors.push(`${content.ename}: ${content.evalue}`);
  });
  await future.done;
  return out;
}

let dirs: SessionDirs;
let session: Session;

beforeAll(async () => {
  if (NO_SANDBOX || !HAVE_MATPLOTLIB) return;
  dirs = await sessionDirs();
  await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify({ sandbox: "required", kernel: { python: PYTHON } }), { mode: 0o600 });
  // A host that sets these for its own desktop must not steer the sandboxed kernel.
  session = await openSession(dirs, { env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, MPLBACKEND: "TkAgg", MPLCONFIGDIR: join(dirs.home, "host-mpl"), DISPLAY: ":0" } });
});

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

describe.skipIf(NO_SANDBOX || !HAVE_MATPLOTLIB)("I-1 K-10 matplotlib draws inline in a sandboxed kernel", () => {
  it("runs the kernel under bubblewrap with the test venv's interpreter", () => {
    expect(session.status().sandbox).toBe("bwrap");
  });

  it("plt.show() sends an image/png the images domain keeps, with nothing on stderr", async () => {
    const shown = await outputsOf(session, "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()");
    expect(shown.errors).toEqual([]);
    expect(shown.stderr).toBe("");
    const png = shown.bundles.find((bundle) => typeof bundle["image/png"] === "string");
    expect(png, JSON.stringify(shown.bundles.map((bundle) => Object.keys(bundle)))).toBeDefined();
    const checked = await checkImage("image/png", png!["image/png"] as string);
    expect(checked).toMatchObject({ ok: true, image: { mime: "image/png" } });
    expect(checked.ok && checked.image.width).toBeGreaterThan(100);
  });

  it("uses the inline backend, and keeps matplotlib's config and font cache in the session's scratch /tmp", async () => {
    const probe = "import matplotlib, os\nprint(os.environ.get('MPLBACKEND'))\nprint(matplotlib.get_backend())\nprint(matplotlib.get_configdir())\nprint(matplotlib.get_cachedir())";
    const { stdout, stderr } = await outputsOf(session, probe);
    expect(stderr).toBe("");
    expect(stdout.trim().split("\n")).toEqual([SANDBOX_PLOT_ENV.MPLBACKEND, SANDBOX_PLOT_ENV.MPLBACKEND, SANDBOX_PLOT_ENV.MPLCONFIGDIR, SANDBOX_PLOT_ENV.MPLCONFIGDIR]);
    // The scratch /tmp is the run dir's, on the host: the font cache the plot above built is there, and nowhere in the home.
    expect(readdirSync(join(session.runDir, SCRATCH_DIRS.tmp, "matplotlib")).some((name) => /^fontlist-.*\.json$/.test(name))).toBe(true);
    expect(existsSync(join(session.runDir, SCRATCH_DIRS.home, ".cache", "matplotlib"))).toBe(false);
  });
});

describe("I-1 K-10 a sandboxed kernel's plotting environment is albedo's, not the host's", () => {
  it("sets MPLBACKEND to the inline backend and MPLCONFIGDIR to the scratch /tmp over the host's values, and passes no DISPLAY", () => {
    const profile = { workspace: "/w", runDir: "/s/run/x", stateDir: "/s", home: "/h", readOnly: [] };
    const inside = sandboxEnv(profile, { MPLBACKEND: "TkAgg", MPLCONFIGDIR: "/h/.config/matplotlib", DISPLAY: ":0", XAUTHORITY: "/h/.Xauthority" });
    expect(inside).toMatchObject({ MPLBACKEND: "module://matplotlib_inline.backend_inline", MPLCONFIGDIR: "/tmp/matplotlib" });
    expect(inside.DISPLAY).toBeUndefined();
    expect(inside.XAUTHORITY).toBeUndefined();
  });
});
