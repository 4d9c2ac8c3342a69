/**
 * The web console's network panel (N-1, N-4), in Debian's chromium against a real daemon and a
 * real sandboxed kernel: it says what the kernel may reach, allows a host for the running kernel's
 * next connection, lists the latest connections, denies, and resets to the setting the session
 * opened with. The test server listens on 127.0.0.2, which is not NO_PROXY inside the kernel.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../daemon/support/daemon.js";
import { echoHandler, startServer, type TestServer } from "../network/support.js";
import { RUN_BROWSER_TESTS, startWebRig, type WebRig } from "./browser.js";

/** Time to start the daemon, chromium and a kernel. */
const SETUP_MS = 120_000;
/** How long the page may take to show what a test waits for (the session list is read every few seconds). */
const SHOWN_MS = 60_000;

/** A cell that fetches URL through the kernel's proxy variables and prints the status. */
const fetchCell = (url: string) =>
  `import urllib.request, urllib.error\ntry:\n    print(urllib.request.urlopen(${JSON.stringify(url)}, timeout=20).status)\nexcept urllib.error.HTTPError as e:\n    print(e.code)`;

describe.skipIf(!RUN_BROWSER_TESTS)("N-1 N-4 W-1 the web console's network panel", () => {
  let rig: WebRig;
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer("127.0.0.2", echoHandler);
    rig = await startWebRig();
  }, SETUP_MS);

  afterAll(async () => {
    await rig?.close();
    await server?.close();
  });

  it("shows the network off, allows a host for the same kernel, lists its connections, denies it, and resets", { timeout: 240_000 }, async () => {
    const { dirs, daemon, page } = rig;
    await rig.logIn();
    await page.getByLabel("Workspace").fill(dirs.workspace);
    await page.getByRole("button", { name: "Open", exact: true }).click();
    const policy = page.getByRole("status", { name: "Network policy" });
    await policy.filter({ hasText: "off (no host is reachable)" }).waitFor({ timeout: SETUP_MS });

    const [session] = (await call(daemon, "GET", "/sessions")).body.sessions as { id: string; kernel: { pid: number; sandbox: string } }[];
    expect(session!.kernel.sandbox).toBe("bwrap");
    const url = `http://127.0.0.2:${server.port}/from-the-page`;
    const denied = await call(daemon, "POST", `/sessions/${session!.id}/execute`, { code: fetchCell(url) });
    expect(JSON.stringify(denied.body.outputs)).toContain("403");

    const host = `127.0.0.2:${server.port}`;
    await page.getByLabel("Host pattern").fill(host);
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await policy.filter({ hasText: "a policy of 1 host" }).waitFor({ timeout: SHOWN_MS });
    expect(await page.getByRole("list", { name: "Allowed hosts" }).textContent()).toContain(host);
    // The daemon changed only this session: the global setting is untouched.
    expect((await call(daemon, "GET", "/settings")).body.global.settings.network).toBeUndefined();

    const allowed = await call(daemon, "POST", `/sessions/${session!.id}/execute`, { code: fetchCell(url) });
    expect(JSON.stringify(allowed.body.outputs)).toContain("200");
    const after = (await call(daemon, "GET", `/sessions/${session!.id}`)).body as { kernel: { pid: number }; network: { from: string } };
    expect(after.kernel.pid).toBe(session!.kernel.pid);
    expect(after.network.from).toBe("session");
    const latest = page.getByRole("list", { name: "Latest connections" });
    await latest.filter({ hasText: `allowed GET ${host}/from-the-page` }).waitFor({ timeout: SHOWN_MS });
    expect(await latest.textContent()).toContain(`denied GET ${host}/from-the-page`);

    await page.getByLabel("Host pattern").fill(host);
    await page.getByRole("button", { name: "Deny", exact: true }).click();
    await page.getByRole("list", { name: "Denied hosts" }).filter({ hasText: host }).waitFor({ timeout: SHOWN_MS });
    const again = await call(daemon, "POST", `/sessions/${session!.id}/execute`, { code: fetchCell(url) });
    expect(JSON.stringify(again.body.outputs)).toContain("403");

    await page.getByRole("button", { name: "Reset", exact: true }).click();
    await policy.filter({ hasText: "off (no host is reachable)" }).waitFor({ timeout: SHOWN_MS });
    expect((await call(daemon, "GET", `/sessions/${session!.id}`)).body.network.from).toBe("global");
  });
});
