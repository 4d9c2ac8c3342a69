/**
 * The web console end to end (W-1..W-3): a real `albedo serve`, a real sandboxed kernel, the local
 * OpenAI-compatible server, and Debian's chromium driven by playwright-core. One browser page walks
 * through what a person does; the safety checks send the requests a hostile page or a rebound name
 * would send. The file takes about 25 s here (6 of them one wait past the untrusted-connection
 * deadline), most of the rest the kernel's boot and chromium's start.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../model/support.js";
import { call, envFor, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { runAlbedo } from "../support/cli.js";
import { writeSkill } from "../support/skills.js";
import { launchChromium, RUN_BROWSER_TESTS } from "./browser.js";
import { EVERYTHING } from "../mcp/support.js";
import { SCREENSHOT_ENV, SCREENSHOT_PATH } from "../support/trackedFiles.js";
import { UNTRUSTED_CONNECTION_TIMEOUT_MS } from "../../src/daemon/limits.js";
import { API, WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX, WEB_STREAM_PROTOCOL } from "../../src/api/index.js";

/** Time to start the daemon, chromium and the session's kernel. */
const SETUP_MS = 120_000;
/** How long the page may take to show what a test waits for. */
const SHOWN_MS = 30_000;
/** Where the guide's screenshot is written, only when SCREENSHOT_ENV is 1: a test run rewrites no tracked file. */
const SCREENSHOT = join(import.meta.dirname, "..", "..", SCREENSHOT_PATH);

/** Python that shows an 8 × 6 PNG made from its bytes (no plotting package needed). */
const SHOW_PNG = [
  "import struct, zlib",
  "from IPython.display import Image, display",
  "def chunk(kind, data): return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))",
  "rows = b''.join(b'\\x00' + bytes([200, 40, 40]) * 8 for _ in range(6))",
  "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 6, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')",
  "display(Image(data=png))",
].join("\n");

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTP request with exactly these headers (fetch would not let a test set Host). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port: Number(port), method, path, headers, setHost: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface OtherServer {
  readonly url: string;
  /** Every Cookie header the browser sent it. */
  readonly cookies: string[];
  close(): Promise<void>;
}

/** Another program's server on 127.0.0.1 (another port): it records the cookies a browser sends it and answers with `setCookies`. */
async function startOtherServer(setCookies: readonly string[] = []): Promise<OtherServer> {
  const cookies: string[] = [];
  const server = createServer((req, res) => {
    if (req.headers.cookie) cookies.push(req.headers.cookie);
    res.writeHead(200, { "content-type": "text/html", ...(setCookies.length > 0 ? { "set-cookie": [...setCookies] } : {}) });
    res.end("<!doctype html><title>your plot</title><p>a plot</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cookies,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** `albedo web --no-browser`, run as a person would: the one-time link it prints. */
async function loginLink(dirs: Dirs): Promise<string> {
  const run = await runAlbedo(["web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs) });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain("works once");
  return run.stdout.trim();
}

describe.skipIf(!RUN_BROWSER_TESTS)("W-1 W-2 W-3 the web console in chromium", () => {
  let server: FakeOpenAI;
  let dirs: Dirs;
  let daemon: DaemonProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let host: string;
  /** The login's cookie as the browser sends it, `albedo_web_PORT=…`. */
  let cookie: string;
  /** The login's page secret, which the page keeps in sessionStorage and sends as X-Albedo-Page. */
  let secret: string;
  /** Both halves of the login, as headers of a raw request. */
  const login = (): Record<string, string> => ({ cookie, [WEB_PAGE_HEADER]: secret });
  /** Every request the page made, as "METHOD /path". */
  const requests: string[] = [];
  /** Every origin the page sent a request to: the daemon's alone (no CDN, works offline). */
  const origins = new Set<string>();

  beforeAll(async () => {
    server = await startFakeOpenAI();
    dirs = await makeDirs();
    writeSkill(join(dirs.workspace, ".agents", "skills"), "pdf-processing", { description: "Fill PDF forms.", body: "Fill the form.\n" });
    const settings = {
      model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool" },
      mcp: { servers: { everything: { command: EVERYTHING } } },
    };
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    host = new URL(daemon.url).host;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("request", (request) => {
      // Images shown from the blobs the page fetched with its login are no requests to any server.
      if (request.url().startsWith("blob:")) return;
      requests.push(`${request.method()} ${new URL(request.url()).pathname}`);
      origins.add(new URL(request.url()).origin);
    });
    page.on("websocket", (ws) => requests.push(`GET ${new URL(ws.url()).pathname}`));
  }, SETUP_MS);

  afterAll(async () => {
    await browser?.close();
    if (daemon) await killDaemon(daemon, "SIGTERM");
    await server?.close();
    await dirs?.cleanup();
  });

  it("logs in through the one-time link: the code in the fragment, an HttpOnly SameSite=Strict cookie named with the port, the page secret in sessionStorage only, the page's policy strict", async () => {
    const link = await loginLink(dirs);
    expect(link).toMatch(new RegExp(`^${daemon.url}/login#code=[0-9a-f]{64}$`));
    const answer = await page.goto(link);
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(answer?.headers()["content-security-policy"]).not.toMatch(/unsafe-inline|unsafe-eval/);
    await page.getByText("No session is open.").waitFor({ timeout: SHOWN_MS });
    expect(page.url()).toBe(`${daemon.url}/`);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: `albedo_web_${new URL(daemon.url).port}`, httpOnly: true, sameSite: "Strict", path: "/" });
    cookie = `${cookies[0]!.name}=${cookies[0]!.value}`;
    secret = (await page.evaluate("sessionStorage.getItem('albedo.page_secret')")) as string;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(await page.evaluate("JSON.stringify(localStorage)")).toBe("{}");
    // The token is nowhere the page can read.
    expect(await page.content()).not.toContain(daemon.token);
  });

  it("opens a session on a workspace from the page", async () => {
    await page.getByLabel("Workspace").fill(dirs.workspace);
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByRole("status").filter({ hasText: "kernel" }).waitFor({ timeout: SETUP_MS });
    const listed = await call(daemon, "GET", "/sessions");
    expect(listed.body.sessions).toHaveLength(1);
    expect(listed.body.sessions[0].workspace).toBe(dirs.workspace);
  }, SETUP_MS);

  it("completes /he to /help and shows its answer", async () => {
    const box = page.getByLabel("Message");
    await box.fill("/he");
    await page.getByRole("option", { name: /\/help/ }).waitFor({ timeout: SHOWN_MS });
    await box.press("Tab");
    expect(await box.inputValue()).toBe("/help ");
    await box.press("Enter");
    await page.locator("[data-kind=command]").filter({ hasText: "/reload" }).waitFor({ timeout: SHOWN_MS });
  });

  it("runs a cell from the Python box and shows its image, fetched with the login cookie", async () => {
    const code = `${SHOW_PNG}\nprint(6 * 7)`;
    await page.getByLabel("Python", { exact: true }).fill(code);
    await page.getByRole("button", { name: "Run" }).click();
    const result = page.getByLabel("Python result");
    await result.getByText("42").waitFor({ timeout: SHOWN_MS });
    const image = result.getByRole("img", { name: /8×6 PNG/ });
    await image.waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth), { timeout: SHOWN_MS }).toBe(8);
  });

  it("streams a running cell's output into the Python box as it comes, and keeps earlier cells above it", async () => {
    await page.getByLabel("Python", { exact: true }).fill("import time\nprint('first', flush=True)\ntime.sleep(4)\nprint('second')");
    await page.getByRole("button", { name: "Run" }).click();
    const result = page.getByLabel("Python result");
    await result.getByText("first").waitFor({ timeout: SHOWN_MS });
    // Shown while the cell still runs.
    expect(await page.getByRole("button", { name: "Running…" }).count()).toBe(1);
    expect(await result.innerText()).not.toContain("second");
    await result.getByText(/first\s+second/).waitFor({ timeout: SHOWN_MS });
    // The cell before it (the 8×6 image's) is still on the page.
    await page.getByLabel("Earlier cell").filter({ hasText: "42" }).first().waitFor({ timeout: SHOWN_MS });
  });

  it("typing / lists the commands over the message box without moving the page", async () => {
    await page.evaluate("window.scrollTo(0, 0)");
    await page.getByLabel("Message").fill("/");
    await page.getByRole("listbox", { name: "Commands" }).waitFor({ timeout: SHOWN_MS });
    expect(await page.evaluate("window.scrollY")).toBe(0);
    await page.getByLabel("Message").fill("");
  });

  it("shows hostile kernel and model text as text", async () => {
    const hostile = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";
    await page.getByLabel("Python", { exact: true }).fill(`print(${JSON.stringify(hostile)})`);
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByLabel("Python result").getByText(hostile).waitFor({ timeout: SHOWN_MS });
    server.enqueue({ kind: "reply", text: hostile });
    await page.getByLabel("Message").fill("say something odd");
    await page.getByLabel("Message").press("Enter");
    await page.locator("[data-kind=assistant]").getByText(hostile).waitFor({ timeout: SHOWN_MS });
    expect(await page.title()).toBe("albedo");
    expect(await page.locator(".transcript img, .transcript script").count()).toBe(0);
  });

  it("streams a model turn's rows: the user's line, the used skill, the assistant's prose", async () => {
    server.enqueue(
      { kind: "reply", toolCalls: [{ id: "c1", name: "skill", arguments: JSON.stringify({ name: "pdf-processing" }) }] },
      { kind: "reply", text: "The form is filled in." },
    );
    await page.getByLabel("Message").fill("fill the form");
    await page.getByLabel("Message").press("Enter");
    await page.locator("[data-kind=user]").filter({ hasText: "fill the form" }).waitFor({ timeout: SHOWN_MS });
    await page.locator("[data-kind=skill]").filter({ hasText: "used skill pdf-processing" }).waitFor({ timeout: SHOWN_MS });
    await page.locator("[data-kind=assistant]").filter({ hasText: "The form is filled in." }).waitFor({ timeout: SHOWN_MS });
  });

  it("shows the model's prose as it streams, and Interrupt ends the turn: the streaming text goes, an interrupted notice comes", async () => {
    server.enqueue({ kind: "partial", text: "Thinking about the forms slowly", deltas: 3, then: "hang" });
    await page.getByLabel("Message").fill("take your time");
    await page.getByLabel("Message").press("Enter");
    const streaming = page.locator("[data-kind=streaming]");
    await streaming.filter({ hasText: "Thinking about the" }).waitFor({ timeout: SHOWN_MS });
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.locator("[data-kind=notice]").filter({ hasText: "interrupted" }).last().waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => streaming.count(), { timeout: SHOWN_MS }).toBe(0);
  });

  it("a model's python step puts its code, its image and its MCP call in the transcript", async () => {
    const code = `${SHOW_PNG}\nprint(await mcp.everything.echo(message='from the page'))`;
    server.enqueue(
      { kind: "reply", toolCalls: [{ id: "p1", name: "python", arguments: JSON.stringify({ code }) }] },
      { kind: "reply", text: "Drawn." },
    );
    await page.getByLabel("Message").fill("draw it");
    await page.getByLabel("Message").press("Enter");
    await page.locator("[data-kind=code]").filter({ hasText: "mcp.everything.echo" }).waitFor({ timeout: SHOWN_MS });
    const mcpRow = page.locator("[data-kind=mcp]").filter({ hasText: "used everything.echo" });
    await mcpRow.waitFor({ timeout: SHOWN_MS });
    // One line for the call: what it returned and how long it took, not the same call twice.
    expect(await mcpRow.innerText()).toMatch(/^used everything\.echo · \d+ B · \d+ ms via python$/);
    const image = page.locator("[data-kind=output]").getByRole("img", { name: /8×6 PNG/ });
    await image.waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth), { timeout: SHOWN_MS }).toBe(8);
    await page.locator("[data-kind=assistant]").filter({ hasText: "Drawn." }).waitFor({ timeout: SHOWN_MS });
  });

  describe("N-4 the web console shows the network as it happens", () => {
    it("a model's python step that is refused the network draws its network row, and the denial line shows as it happens", async () => {
      // The network is off (no setting): the session's proxy refuses every host, and says how to allow it.
      const code = "import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen('http://127.0.0.3:9/page', timeout=20)\nexcept urllib.error.HTTPError as e:\n    print('refused', e.code)";
      server.enqueue({ kind: "reply", toolCalls: [{ id: "n1", name: "python", arguments: JSON.stringify({ code }) }] }, { kind: "reply", text: "Refused." });
      await page.getByLabel("Message").fill("fetch it");
      await page.getByLabel("Message").press("Enter");
      const line = page.getByRole("log", { name: "Network denials" }).getByText("network: blocked 127.0.0.3:9 (network is off) — allow it: albedo network allow 127.0.0.3:9");
      await line.waitFor({ timeout: SHOWN_MS });
      const row = page.locator("[data-kind=network]");
      await row.waitFor({ timeout: SHOWN_MS });
      expect(await row.innerText()).toBe("blocked network 127.0.0.3 (network is off)");
      await page.locator("[data-kind=output]").filter({ hasText: "refused 403" }).waitFor({ timeout: SHOWN_MS });
    });
  });

  it("Reload rediscovers skills and says what changed", async () => {
    writeSkill(join(dirs.workspace, ".agents", "skills"), "csv-cleaning", { description: "Clean CSV files." });
    await page.getByRole("button", { name: "Reload" }).click();
    await page.getByLabel("Reload result").getByText(/Reloaded: \d+ skills; added csv-cleaning/).waitFor({ timeout: SHOWN_MS });
    await page.getByRole("switch", { name: "csv-cleaning (session)" }).waitFor({ timeout: SHOWN_MS });
  });

  it("switches a skill off for the session: the next turn's system message leaves it out", async () => {
    const before = server.requests.at(-1)!.body.messages[0].content as string;
    expect(before).toContain("pdf-processing");
    const toggle = page.getByRole("switch", { name: "pdf-processing (session)" });
    expect(await toggle.isChecked()).toBe(true);
    await toggle.click();
    await page.getByText("pdf-processing is off for this session").waitFor({ timeout: SHOWN_MS });
    expect(await toggle.isChecked()).toBe(false);
    server.enqueue({ kind: "reply", text: "Noted." });
    const asked = server.requests.length;
    await page.getByLabel("Message").fill("anything else?");
    await page.getByLabel("Message").press("Enter");
    await page.locator("[data-kind=assistant]").filter({ hasText: "Noted." }).waitFor({ timeout: SHOWN_MS });
    expect(server.requests.length).toBe(asked + 1);
    expect(server.requests.at(-1)!.body.messages[0].content).not.toContain("pdf-processing");
  });

  it("a switch written against a stale list gets 409: the panel reads the list again and says why", async () => {
    const sessionId = (await call(daemon, "GET", "/sessions")).body.sessions[0].id as string;
    const catalog = await call(daemon, "GET", `/sessions/${sessionId}/catalog`);
    // Someone else turns it back on meanwhile (another page, `albedo skills on`).
    const patched = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { on: ["pdf-processing"] }, { "if-match": `"${catalog.body.revision}"` });
    expect(patched.status).toBe(200);
    const toggle = page.getByRole("switch", { name: "pdf-processing (session)" });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.click();
    await page.getByText(/The skills changed since this list was read/).waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => toggle.isChecked(), { timeout: SHOWN_MS }).toBe(true);
  });

  it("a switch for the global scope writes the global settings file; a stale one gets 409 and the panel says why", async () => {
    const global = page.getByRole("switch", { name: "pdf-processing (global)" });
    expect(await global.isChecked()).toBe(false);
    await global.click();
    await page.getByText("pdf-processing is on for every workspace").waitFor({ timeout: SHOWN_MS });
    const file = await call(daemon, "GET", "/settings");
    expect(file.body.global.settings.skills.on).toContain("pdf-processing");
    // Someone else writes the file meanwhile.
    const other = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { on: ["elsewhere"] } }, { "if-match": `"${file.body.global.revision}"` });
    expect(other.status).toBe(200);
    await global.click();
    await page.getByText(/The skills changed since this list was read/).waitFor({ timeout: SHOWN_MS });
    const after = await call(daemon, "GET", "/settings");
    expect(after.body.global.settings.skills.on).toEqual(expect.arrayContaining(["pdf-processing", "elsewhere"]));
    await expect.poll(() => global.isChecked(), { timeout: SHOWN_MS }).toBe(true);
  });

  it("reset takes a scope's word back: the global file no longer names the skill, the switch says (not set), and the session's override goes", async () => {
    const label = page.getByRole("listitem").filter({ has: page.getByRole("switch", { name: "pdf-processing (global)" }) });
    await page.getByRole("button", { name: "Reset pdf-processing (global)" }).click();
    await page.getByText("pdf-processing is not set for every workspace any more: the default decides").waitFor({ timeout: SHOWN_MS });
    const file = await call(daemon, "GET", "/settings");
    expect(file.body.global.settings.skills.on).toEqual(["elsewhere"]);
    await label.getByText("global (not set)").waitFor({ timeout: SHOWN_MS });
    expect(await page.getByRole("button", { name: "Reset pdf-processing (global)" }).count()).toBe(0);
    // The session's override (on, from the test before) goes too: the session follows the settings again.
    const sessionId = (await call(daemon, "GET", "/sessions")).body.sessions[0].id as string;
    const skill = async () => ((await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body.skills as { name: string; session_override: string | null }[]).find((one) => one.name === "pdf-processing")!;
    expect((await skill()).session_override).toBe("on");
    await page.getByRole("button", { name: "Reset pdf-processing (session)" }).click();
    await page.getByText("pdf-processing is not set for this session any more: the settings files decide").waitFor({ timeout: SHOWN_MS });
    expect((await skill()).session_override).toBeNull();
  });

  it("lists the session's MCP servers with their status", async () => {
    await page.getByLabel("MCP servers").getByText(/everything · running · \d+ tools · global/).waitFor({ timeout: SHOWN_MS });
  });

  it("Interrupt ends a running cell", async () => {
    await page.getByLabel("Python", { exact: true }).fill("import time\nprint('sleeping', flush=True)\ntime.sleep(120)");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("button", { name: "Running…" }).waitFor({ timeout: SHOWN_MS });
    // The interrupt waits for the cell to begin, so it may go at once.
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.getByLabel("Python result").getByText("KeyboardInterrupt").waitFor({ timeout: SHOWN_MS });
    if (process.env[SCREENSHOT_ENV] === "1") await page.screenshot({ path: SCREENSHOT });
  });

  it("refuses a foreign Host, a foreign Origin, a cookie without Origin on a write, and a stream upgrade from another site", async () => {
    const sessionId = (await call(daemon, "GET", "/sessions")).body.sessions[0].id as string;
    expect((await raw(daemon.url, "GET", "/sessions", { host, ...login() })).status).toBe(200);
    const rebound = await raw(daemon.url, "GET", "/sessions", { host: `rebound.example:${new URL(daemon.url).port}`, ...login() });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).code).toBe("origin_not_allowed");
    expect((await raw(daemon.url, "GET", "/", { host: "rebound.example" })).status).toBe(403);
    const foreign = await raw(daemon.url, "POST", `/sessions/${sessionId}/interrupt`, { host, ...login(), origin: "http://evil.example" });
    expect(JSON.parse(foreign.body).code).toBe("origin_not_allowed");
    const noOrigin = await raw(daemon.url, "POST", `/sessions/${sessionId}/interrupt`, { host, ...login() });
    expect(JSON.parse(noOrigin.body).code).toBe("origin_not_allowed");
    // A web login never mints login links.
    expect((await raw(daemon.url, "POST", "/web/logins", { host, ...login(), origin: daemon.url })).status).toBe(401);
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/sessions/${sessionId}/stream`, [WEB_STREAM_PROTOCOL, `${WEB_PAGE_PROTOCOL_PREFIX}${secret}`], { headers: { cookie, origin: "http://evil.example" } });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => (ws.close(), resolve(101)));
      ws.on("error", () => undefined);
    });
    expect(refused).toBe(403);
  });

  it("C1 a cookie alone opens nothing: a server on another port of 127.0.0.1 receives it from the browser and replays it with the daemon's Origin, and every route, a settings write and the stream refuse it", async () => {
    const other = await startOtherServer();
    try {
      const visit = await context.newPage();
      // The user follows a link a cell printed ("your plot"); the browser sends the daemon's cookie along.
      await visit.goto(`${other.url}/plot`);
      await visit.close();
      const stolen = other.cookies.find((header) => header.includes(cookie));
      expect(stolen, "the browser sent the login cookie to the other port").toBeDefined();
      const asDaemonPage = { host, cookie: stolen!, origin: daemon.url };
      const sessionId = (await call(daemon, "GET", "/sessions")).body.sessions[0].id as string;
      const settingsBefore = await readFile(join(dirs.state, "settings.json"), "utf8");
      const json = { "content-type": "application/json" };
      const attempts = [
        await raw(daemon.url, "GET", "/sessions", asDaemonPage),
        await raw(daemon.url, "POST", "/sessions", { ...asDaemonPage, ...json }, JSON.stringify({ workspace: dirs.workspace })),
        await raw(daemon.url, "POST", `/sessions/${sessionId}/execute`, { ...asDaemonPage, ...json }, JSON.stringify({ code: "print('pwned')" })),
        await raw(daemon.url, "PATCH", "/settings", { ...asDaemonPage, ...json, "if-match": `"${(await call(daemon, "GET", "/settings")).body.global.revision}"` },
          JSON.stringify({ scope: "global", sandbox: "off", mcp: { servers: { pwn: { command: "sh", args: ["-c", "id"] } } } })),
        await raw(daemon.url, "POST", "/web/login/cookie", asDaemonPage),
        await raw(daemon.url, "POST", "/web/logins", asDaemonPage),
      ];
      for (const attempt of attempts) expect(attempt.status, attempt.body).toBe(401);
      expect(await readFile(join(dirs.state, "settings.json"), "utf8")).toBe(settingsBefore);
      const upgrade = await new Promise<number>((resolve) => {
        const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/sessions/${sessionId}/stream`, [WEB_STREAM_PROTOCOL], { headers: { cookie: stolen!, origin: daemon.url } });
        ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        ws.on("open", () => (ws.close(), resolve(101)));
        ws.on("error", () => undefined);
      });
      expect(upgrade).toBe(401);
      // With the page secret, the same request is the page's.
      expect((await raw(daemon.url, "GET", "/sessions", { ...asDaemonPage, [WEB_PAGE_HEADER]: secret })).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it("C1 cookies tossed by another port, one over the login's and one shadowing it under a longer path, neither log the page out nor make it another login's", async () => {
    // A second, valid login the page must never be made to act as (login CSRF).
    const code = new URLSearchParams(new URL(await loginLink(dirs)).hash.slice(1)).get("code")!;
    const second = await raw(daemon.url, "POST", "/web/login", { host, origin: daemon.url, "content-type": "application/json" }, JSON.stringify({ code }));
    const secondCookie = String(second.headers["set-cookie"]?.[0]).split(";")[0]!.split("=")[1]!;
    const name = cookie.split("=")[0]!;
    const other = await startOtherServer([`${name}=${secondCookie}; Path=/`, `${name}=shadow; Path=/sessions`]);
    try {
      const visit = await context.newPage();
      await visit.goto(`${other.url}/toss`);
      await visit.close();
      expect((await context.cookies()).find((c) => c.path === "/")?.value).toBe(secondCookie);
      // Back on the console, the page keeps working: it renews its own cookie with its secret.
      await page.getByLabel("Python", { exact: true }).fill("print('still', 6 * 7)");
      await page.getByRole("button", { name: "Run" }).click();
      await page.getByLabel("Python result").getByText("still 42").waitFor({ timeout: SHOWN_MS });
      const renewed = (await context.cookies()).find((c) => c.path === "/")!;
      expect(renewed.value).not.toBe(secondCookie);
      expect(`${name}=${renewed.value}`).not.toBe(cookie);
      // The old cookie is void, the new one is this page's, and the second login's cookie never serves this page's secret.
      expect((await raw(daemon.url, "GET", "/sessions", { host, ...login() })).status).toBe(401);
      cookie = `${name}=${renewed.value}`;
      expect((await raw(daemon.url, "GET", "/sessions", { host, ...login() })).status).toBe(200);
      expect((await raw(daemon.url, "GET", "/sessions", { host, cookie: `${name}=${secondCookie}`, [WEB_PAGE_HEADER]: secret })).status).toBe(401);
      await context.clearCookies({ name, path: "/sessions" });
    } finally {
      await other.close();
    }
  });

  it("a stream opened with the web login is a trusted connection: it outlives UNTRUSTED_CONNECTION_TIMEOUT_MS", async () => {
    const sessionId = (await call(daemon, "GET", "/sessions")).body.sessions[0].id as string;
    const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/sessions/${sessionId}/stream`, [WEB_STREAM_PROTOCOL, `${WEB_PAGE_PROTOCOL_PREFIX}${secret}`], { headers: { cookie, origin: daemon.url } });
    let closed = false;
    ws.on("close", () => (closed = true));
    await new Promise<void>((resolve, reject) => (ws.once("open", () => resolve()), ws.once("error", reject)));
    await new Promise((resolve) => setTimeout(resolve, UNTRUSTED_CONNECTION_TIMEOUT_MS + 1_000));
    expect(closed).toBe(false);
    ws.close();
  });

  it("serves its files with their types, the page revalidated and the hashed assets cached for good, all from the daemon's origin", async () => {
    const index = await raw(daemon.url, "GET", "/", { host });
    expect(index.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(index.headers["cache-control"]).toBe("no-cache");
    const script = /src="\.?(\/assets\/[\w.-]+\.js)"/.exec(index.body)?.[1];
    expect(script).toBeDefined();
    const asset = await raw(daemon.url, "GET", script!, { host });
    expect(asset.status).toBe(200);
    expect(asset.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(asset.headers["x-content-type-options"]).toBe("nosniff");
    expect((await raw(daemon.url, "GET", "/assets/../../etc/passwd", { host })).status).toBe(404);
    expect(origins).toEqual(new Set([daemon.url]));
  });

  it("lists each session with who opened it and a path that tells them apart; a reloaded page keeps its login and never picks another client's session", async () => {
    const other = join(dirs.root, "projects", "other-project");
    await mkdir(other, { recursive: true });
    const consoleSession = await call(daemon, "POST", "/sessions", { workspace: other, client: "console" });
    expect(consoleSession.status).toBe(201);
    try {
      await page.reload();
      const list = page.getByRole("navigation", { name: "Sessions" });
      await list.getByText("console").waitFor({ timeout: SHOWN_MS });
      expect(await list.getByText("web", { exact: true }).count()).toBe(1);
      await list.getByText("…/projects/other-project").waitFor({ timeout: SHOWN_MS });
      // The page's own session stays the one shown, not the console's.
      const current = list.locator("[aria-current=true]");
      expect(await current.innerText()).toContain("web");
      await list.getByText("…/projects/other-project").click();
      await page.getByText("opened by a console: what you change here changes that session").waitFor({ timeout: SHOWN_MS });
      await list.getByText("web", { exact: true }).click();
    } finally {
      await call(daemon, "DELETE", `/sessions/${consoleSession.body.id}`);
    }
  }, SETUP_MS);

  it("Close ends the session", async () => {
    await page.getByRole("button", { name: `Close ${dirs.workspace}` }).click();
    await page.getByText("No session is open.").waitFor({ timeout: SHOWN_MS });
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([]);
  });

  it("a login link works once (a used one says so on the page), and logging out ends the login in every tab", async () => {
    const link = new URL(await loginLink(dirs));
    const code = new URLSearchParams(link.hash.slice(1)).get("code")!;
    expect((await raw(daemon.url, "GET", link.pathname, { host })).status).toBe(200);
    const first = await raw(daemon.url, "POST", "/web/login", { host, origin: daemon.url, "content-type": "application/json" }, JSON.stringify({ code }));
    expect(first.status).toBe(201);
    expect(JSON.parse(first.body).page_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(first.headers["set-cookie"]?.[0]).toMatch(/^albedo_web_\d+=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\/$/);
    const again = await raw(daemon.url, "POST", "/web/login", { host, origin: daemon.url, "content-type": "application/json" }, JSON.stringify({ code }));
    expect(again.status).toBe(401);
    expect(JSON.parse(again.body).detail).toContain("used already");
    // The same link opened in the browser: a sentence on the page, not a problem document.
    const used = await context.newPage();
    await used.goto(link.href);
    await used.getByText(/This login link did not work: this login link was used already/).waitFor({ timeout: SHOWN_MS });
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByText("You are not logged in").waitFor({ timeout: SHOWN_MS });
    await used.getByText("You are not logged in").waitFor({ timeout: SHOWN_MS });
    await used.close();
    expect((await raw(daemon.url, "GET", "/sessions", { host, ...login() })).status).toBe(401);
    expect(await context.cookies()).toHaveLength(0);
  });

  it("the page used only routes of the OpenAPI document, besides its own files and the login link", () => {
    const routes = Object.values(API).map((spec) => ({ method: spec.method, path: new RegExp(`^${spec.path.replace(/\{[a-z_]+\}/g, "[^/]+")}$`) }));
    const own = /^GET (\/|\/login|\/assets\/[\w.-]+)$/;
    expect(requests).not.toContain("GET /favicon.ico");
    const outside = [...new Set(requests)].filter((request) => {
      if (own.test(request)) return false;
      const [method, path] = request.split(" ") as [string, string];
      return !routes.some((route) => route.method === method && route.path.test(path));
    });
    expect(requests.length).toBeGreaterThan(10);
    expect(requests).toContain("POST /web/logout");
    expect(outside).toEqual([]);
  });
});

