/**
 * The web console's side of durable kernel state (K-15), in Debian's chromium: the session list
 * offers to resume a closed session whose checkpoint is kept, and the session shows the restore
 * line, on opening and when its kernel died and came back restored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../daemon/support/daemon.js";
import { poll } from "../support/poll.js";
import { RUN_BROWSER_TESTS, startWebRig, type WebRig } from "./browser.js";

/** Time to start the daemon, chromium and a kernel. */
const SETUP_MS = 120_000;
/** How long the page may take to show what a test waits for. */
const SHOWN_MS = 60_000;

describe.skipIf(!RUN_BROWSER_TESTS)("K-15 W-1 resuming and restores in the web console", () => {
  let rig: WebRig;

  beforeAll(async () => {
    rig = await startWebRig();
  }, SETUP_MS);

  afterAll(async () => {
    await rig?.close();
  });

  it("lists a closed session with a checkpoint, resumes it with its variables, and shows each restore", { timeout: 240_000 }, async () => {
    const { dirs, daemon, page } = rig;
    const first = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    await call(daemon, "POST", `/sessions/${first}/execute`, { code: "kept = 41" });
    expect((await call(daemon, "DELETE", `/sessions/${first}`)).status).toBe(204);

    await rig.logIn();
    const resume = page.getByRole("button", { name: `Resume ${dirs.workspace} (${first})` });
    await resume.waitFor({ timeout: SHOWN_MS });
    await resume.click();
    const restore = page.getByRole("status", { name: "Restore" });
    await restore.filter({ hasText: "kernel restored from its checkpoint: restored 1 of 1 name" }).waitFor({ timeout: SHOWN_MS });
    const listed = (await call(daemon, "GET", "/sessions")).body.sessions as { id: string; client: string; kernel: { pid: number } }[];
    expect(listed).toHaveLength(1);
    const resumed = listed[0]!;
    expect(resumed.client).toBe("web");
    const out = await call(daemon, "POST", `/sessions/${resumed.id}/execute`, { code: "print(kept + 1)\nmore = 'x'" });
    expect(out.body.outputs[0].content.text).toBe("42\n");

    // The kernel dies under the page: the supervisor brings it back restored, and the page says so.
    process.kill(resumed.kernel.pid, "SIGKILL");
    await restore.filter({ hasText: "restored 2 of 2 names" }).waitFor({ timeout: SHOWN_MS });
    await poll(async () => (await call(daemon, "GET", `/sessions/${resumed.id}`)).body.kernel.pid !== resumed.kernel.pid, { what: "a new kernel" });
  });
});
