/**
 * Skills over MCP (SEP-2640) as albedo serves them: a 2.x SDK McpServer with offerSkillsOverMcp on
 * a real session's catalog (real skill directories, links and settings in temp dirs), driven by
 * the SDK's own 2.x client and its SkillsClient over Streamable HTTP on loopback, in both eras;
 * the in-memory pair only for the notification and bound logic.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SKILL_LIMITS, SkillsClient, type Skill } from "@modelcontextprotocol/client/ext/skills";
import { createMcpHandler, McpServer, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { SkillCatalogChanges, SkillWarning } from "@modelcontextprotocol/server/ext/skills";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_PUBLISHED_SKILL_BYTES } from "../../src/mcpServer/limits.js";
import { offerSkillsOverMcp, SkillsOverMcp } from "../../src/mcpServer/skillsOverMcp.js";
import type { Session } from "../../src/session/index.js";
import { openSession, sessionDirs, sessionsPerTest, type SessionDirs } from "../session/fixtures.js";
import { roots, writeSkill } from "../support/skills.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe, 0x01]);
const MODERN = "2026-07-28";

/** alpha (text, nested, binary), beta, gamma (disabled by the project's settings), linky (a link out, a link in). */
function writeSkills(dirs: SessionDirs): { skills: string; outside: string } {
  const skills = roots.wsAgents(dirs.workspace);
  const alpha = writeSkill(skills, "alpha", { body: "Use references/GUIDE.md.\n" });
  mkdirSync(join(alpha, "references"));
  writeFileSync(join(alpha, "references", "GUIDE.md"), "# Guide\n\nStep one.\n");
  mkdirSync(join(alpha, "scripts"));
  writeFileSync(join(alpha, "scripts", "run.py"), "print('hi')\n");
  mkdirSync(join(alpha, "assets"));
  writeFileSync(join(alpha, "assets", "logo.png"), PNG);
  writeSkill(skills, "beta");
  writeSkill(skills, "gamma");
  const linky = writeSkill(skills, "linky");
  const outside = join(dirs.root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "not for clients\n");
  symlinkSync(join(outside, "secret.txt"), join(linky, "secret.txt"));
  symlinkSync(outside, join(linky, "elsewhere"));
  writeFileSync(join(linky, "notes.md"), "notes\n");
  symlinkSync("notes.md", join(linky, "alias.md"));
  mkdirSync(join(dirs.workspace, ".albedo"), { recursive: true });
  writeFileSync(join(dirs.workspace, ".albedo", "settings.json"), JSON.stringify({ skills: { off: ["gamma"] } }));
  return { skills, outside };
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const byName = (skills: readonly Skill[]) => new Map(skills.map((skill) => [skill.frontmatter.name, skill]));
const pathsOf = (skill: Skill) => (skill.resources === "dynamic" ? [] : skill.resources.map((r) => r.uri.slice(skill.uri.length - "SKILL.md".length)));

/** createMcpHandler's fetch face on a loopback port: each request gets its own McpServer, with the session's skills attached. */
async function serveHttp(skills: SkillsOverMcp): Promise<{ url: URL; handler: McpHttpHandler; http: HttpServer }> {
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: "albedo-test", version: "1.0.0" });
    skills.attach(mcp);
    return mcp;
  });
  const http = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, ...(hasBody ? { body: Buffer.concat(chunks) } : {}) }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`), handler, http };
}

async function httpClient(url: URL, era: "legacy" | typeof MODERN): Promise<{ client: Client; skills: SkillsClient }> {
  const client = new Client({ name: "albedo-test-host", version: "1.0.0" }, era === "legacy" ? {} : { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(url));
  return { client, skills: new SkillsClient(client) };
}

describe("P-4 P-5 Skills over MCP on a 2.x server, over Streamable HTTP on loopback", () => {
  let dirs: SessionDirs;
  let session: Session;
  let files: { skills: string; outside: string };
  let skills: SkillsOverMcp;
  let served: Awaited<ReturnType<typeof serveHttp>>;
  const warnings: SkillWarning[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    dirs = await sessionDirs();
    files = writeSkills(dirs);
    session = await openSession(dirs, { kernel: "external" });
    skills = new SkillsOverMcp(Promise.resolve(session), { onWarning: (w) => warnings.push(w) });
    served = await serveHttp(skills);
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  afterAll(async () => {
    skills?.dispose();
    await served?.handler.close();
    await new Promise((resolve) => served?.http.close(resolve));
    await session?.close();
    await dirs?.cleanup();
  });

  async function connect(era: "legacy" | typeof MODERN): Promise<SkillsClient> {
    const { client, skills: host } = await httpClient(served.url, era);
    clients.push(client);
    return host;
  }

  for (const era of ["legacy", MODERN] as const) {
    it(`skills/list lists the enabled skills with the digests of their files; a disabled skill is absent (${era})`, async () => {
      const host = await connect(era);
      expect(host.supported).toBe(true);
      expect(host.directoryRead).toBe(true);
      const listing = await host.list();
      expect(listing.invalid).toEqual([]);
      const named = byName(listing.skills);
      for (const name of ["alpha", "beta", "linky"]) expect(named.has(name)).toBe(true);
      expect(named.has("gamma")).toBe(false);
      // What the session enables is exactly what is listed (built-in skills included).
      expect([...named.keys()].sort()).toEqual(session.view.snapshot.skills.map((s) => s.name).sort());
      const alpha = named.get("alpha")!;
      expect(alpha.uri).toBe("skill://alpha/SKILL.md");
      expect(pathsOf(alpha).sort()).toEqual(["SKILL.md", "assets/logo.png", "references/GUIDE.md", "scripts/run.py"]);
      for (const resource of alpha.resources === "dynamic" ? [] : alpha.resources) {
        const path = resource.uri.slice("skill://alpha/".length);
        const bytes = readFileSync(join(files.skills, "alpha", ...path.split("/")));
        expect(resource).toMatchObject({ digest: sha256(bytes), size: bytes.length });
      }
      if (era === MODERN) expect(listing).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    });
  }

  it("skills/get returns one skill; its files read verified, text as text and binary as bytes", async () => {
    const host = await connect(MODERN);
    const { skill } = await host.get("skill://alpha/SKILL.md");
    expect(skill.frontmatter).toMatchObject({ name: "alpha", description: "The alpha skill." });
    const manifest = await host.read(skill);
    expect(manifest).toMatchObject({ verified: true, body: "Use references/GUIDE.md.\n" });
    const guide = await host.read(skill, "references/GUIDE.md");
    expect(guide).toMatchObject({ verified: true, text: "# Guide\n\nStep one.\n" });
    const logo = await host.read(skill, "assets/logo.png");
    expect(logo.verified).toBe(true);
    expect(logo.text).toBeUndefined();
    expect(Buffer.from(logo.bytes)).toEqual(PNG);
    await expect(host.get("skill://gamma/SKILL.md")).rejects.toThrow(/No skill is served at skill:\/\/gamma\/SKILL.md/);
  });

  it("albedo's page addresses (?offset=N) still read one page from that byte, under the extension's skill:// template", async () => {
    await connect("legacy");
    const page = await clients[0]!.readResource({ uri: "skill://alpha/references/GUIDE.md?offset=2" });
    expect(page.contents).toEqual([{ uri: "skill://alpha/references/GUIDE.md?offset=2", mimeType: "text/markdown", text: "Guide\n\nStep one.\n" }]);
    await expect(clients[0]!.readResource({ uri: "skill://gamma/SKILL.md?offset=0" })).rejects.toThrow(/not found/i);
  });

  it("resources/directory/read lists a skill's files and directories", async () => {
    const host = await connect(MODERN);
    const root = await host.readDirectory("skill://alpha");
    expect(root.resources.map((r) => [r.name, r.mimeType])).toEqual([
      ["SKILL.md", "text/markdown"],
      ["assets", "inode/directory"],
      ["references", "inode/directory"],
      ["scripts", "inode/directory"],
    ]);
    const references = await host.readDirectory("skill://alpha/references");
    expect(references.resources).toEqual([{ uri: "skill://alpha/references/GUIDE.md", name: "GUIDE.md", mimeType: "text/markdown", size: Buffer.byteLength("# Guide\n\nStep one.\n") }]);
    await expect(host.readDirectory("skill://gamma")).rejects.toThrow(/not a directory resource/);
  });

  it("a link that leaves its skill's directory is neither listed nor read; a link inside it is served", async () => {
    const host = await connect("legacy");
    const linky = byName((await host.list()).skills).get("linky")!;
    expect(pathsOf(linky).sort()).toEqual(["SKILL.md", "alias.md", "notes.md"]);
    expect((await host.read(linky, "alias.md")).text).toBe("notes\n");
    const [client] = clients;
    for (const uri of ["skill://linky/secret.txt", "skill://linky/elsewhere/secret.txt"]) {
      await expect(client!.readResource({ uri })).rejects.toThrow(/not found/i);
    }
    expect(warnings.map((w) => w.path)).toEqual(expect.arrayContaining(["linky/secret.txt", "linky/elsewhere/secret.txt"]));
    expect(JSON.stringify(await host.readDirectory("skill://linky"))).not.toContain("secret");
  });

  it("a link turned outward after publication is refused at read, even toward a file of identical bytes", async () => {
    const host = await connect(MODERN);
    const linky = byName((await host.list()).skills).get("linky")!;
    const alias = join(files.skills, "linky", "alias.md");
    writeFileSync(join(files.outside, "copy.md"), "notes\n");
    rmSync(alias);
    symlinkSync(join(files.outside, "copy.md"), alias);
    try {
      await expect(host.read(linky, "alias.md")).rejects.toThrow(/resolves outside the skill's directory/);
    } finally {
      rmSync(alias);
      symlinkSync("notes.md", alias);
    }
  });

  it("a file edited in place is refused until a reload; the reload changes that skill's digests and no other's", async () => {
    const host = await connect(MODERN);
    const before = byName((await host.list()).skills);
    const guide = join(files.skills, "alpha", "references", "GUIDE.md");
    writeFileSync(guide, "# Guide\n\nStep one, then two.\n");
    // Still the published entry: a host that reads the file now is refused rather than handed bytes its digest does not cover.
    expect(byName((await host.list()).skills).get("alpha")).toEqual(before.get("alpha"));
    await expect(host.read(before.get("alpha")!, "references/GUIDE.md")).rejects.toThrow(/changed since the skill was published/);
    await session.reload();
    const after = byName((await host.list()).skills);
    const digestOf = (skill: Skill, path: string) => (skill.resources === "dynamic" ? undefined : skill.resources.find((r) => r.uri.endsWith(path))?.digest);
    expect(digestOf(after.get("alpha")!, "references/GUIDE.md")).toBe(sha256(readFileSync(guide)));
    expect(digestOf(after.get("alpha")!, "references/GUIDE.md")).not.toBe(digestOf(before.get("alpha")!, "references/GUIDE.md"));
    expect(digestOf(after.get("alpha")!, "SKILL.md")).toBe(digestOf(before.get("alpha")!, "SKILL.md"));
    for (const [name, skill] of before) if (name !== "alpha") expect(after.get(name)).toEqual(skill);
    expect((await host.read(after.get("alpha")!, "references/GUIDE.md")).text).toBe("# Guide\n\nStep one, then two.\n");
  });
});

describe("P-4 P-5 Skills over MCP: reload announcements and bounds (in-memory pair)", () => {
  const sessions = sessionsPerTest();
  const open: { client: Client; skills: SkillsOverMcp }[] = [];

  afterEach(async () => {
    for (const { client, skills } of open.splice(0)) {
      skills.dispose();
      await client.close();
    }
  });

  async function connected(session: Session, options: { onWarning?: (w: SkillWarning) => void; onChange?: (c: SkillCatalogChanges) => void } = {}) {
    const mcp = new McpServer({ name: "albedo-test", version: "1.0.0" });
    const skills = offerSkillsOverMcp(mcp, session, { onWarning: () => undefined, ...options });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: "albedo-test-host", version: "1.0.0" });
    const announced: string[] = [];
    client.setNotificationHandler("notifications/resources/list_changed", () => void announced.push("resources"));
    await client.connect(clientSide);
    open.push({ client, skills });
    return { client, host: new SkillsClient(client), skills, announced };
  }

  it("a reload that changes a description announces resources/list_changed; one that changes only a file's bytes reports the changed skill", async () => {
    let root = "";
    const { session } = await sessions.open((dirs) => {
      root = roots.wsAgents(dirs.workspace);
      writeSkill(root, "alpha");
      writeSkill(root, "beta");
    });
    const changes: SkillCatalogChanges[] = [];
    const { host, announced } = await connected(session, { onChange: (c) => changes.push(c) });
    expect(byName((await host.list()).skills).has("alpha")).toBe(true);
    writeFileSync(join(root, "alpha", "extra.txt"), "more\n");
    await session.reload();
    await expect.poll(() => changes.length).toBe(1);
    expect(changes[0]).toEqual({ added: [], removed: [], changed: ["skill://alpha/SKILL.md"], listChanged: false });
    expect(announced).toEqual([]);
    writeSkill(root, "beta", { description: "Another description." });
    await session.reload();
    await expect.poll(() => announced.length).toBe(1);
    expect(changes[1]).toMatchObject({ changed: ["skill://beta/SKILL.md"], listChanged: true });
    expect(byName((await host.list()).skills).get("beta")!.frontmatter.description).toBe("Another description.");
  });

  it(`a skill past SKILL_LIMITS.bytes (${SKILL_LIMITS.bytes}) or past albedo's listing bound is not published, with a warning naming the limit`, async () => {
    const half = Math.floor(SKILL_LIMITS.bytes / 2) + 1;
    const { session } = await sessions.open((dirs) => {
      const root = roots.wsAgents(dirs.workspace);
      writeSkill(root, "small");
      const heavy = writeSkill(root, "heavy");
      writeFileSync(join(heavy, "a.bin"), Buffer.alloc(half, 1));
      writeFileSync(join(heavy, "b.bin"), Buffer.alloc(half, 2));
      const many = writeSkill(root, "many");
      mkdirSync(join(many, "files"));
      for (let i = 0; i < SKILL_LIMITS.files; i++) writeFileSync(join(many, "files", `f${i}.txt`), `${i}\n`);
    });
    const warnings: SkillWarning[] = [];
    const { host } = await connected(session, { onWarning: (w) => warnings.push(w) });
    const named = byName((await host.list()).skills);
    expect(named.has("small")).toBe(true);
    expect(named.has("heavy")).toBe(false);
    expect(named.has("many")).toBe(false);
    expect(warnings.find((w) => w.path === "heavy")?.message).toMatch(/SKILL_LIMITS.bytes = 16777216/);
    expect(warnings.find((w) => w.path === "many")?.message).toMatch(/listing is incomplete.*MAX_RESOURCES = 512/);
  });

  it("one publication reads at most MAX_PUBLISHED_SKILL_BYTES over all skills; the skills past it are left out, naming the limit", async () => {
    const each = Math.floor(MAX_PUBLISHED_SKILL_BYTES / 4.5);
    expect(each).toBeLessThan(SKILL_LIMITS.bytes);
    const { session } = await sessions.open((dirs) => {
      const root = roots.wsAgents(dirs.workspace);
      for (let i = 1; i <= 5; i++) writeFileSync(join(writeSkill(root, `big-${i}`), "data.bin"), Buffer.alloc(each, i));
    });
    const warnings: SkillWarning[] = [];
    const { host } = await connected(session, { onWarning: (w) => warnings.push(w) });
    const named = byName((await host.list()).skills);
    expect(["big-1", "big-2", "big-3", "big-4"].every((name) => named.has(name))).toBe(true);
    expect(named.has("big-5")).toBe(false);
    expect(warnings.find((w) => w.path === "big-5")?.message).toMatch(new RegExp(`MAX_PUBLISHED_SKILL_BYTES = ${MAX_PUBLISHED_SKILL_BYTES} over all skills`));
  });

  it("a request waits for a session still opening, and a skill the SDK cannot publish is left out with a warning", async () => {
    let release!: (session: Session) => void;
    const pending = new Promise<Session>((resolve) => (release = resolve));
    const mcp = new McpServer({ name: "albedo-test", version: "1.0.0" });
    const warnings: SkillWarning[] = [];
    const skills = offerSkillsOverMcp(mcp, pending, { onWarning: (w) => warnings.push(w) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: "albedo-test-host", version: "1.0.0" });
    await client.connect(clientSide);
    open.push({ client, skills });
    const listing = new SkillsClient(client).list();
    const { session } = await sessions.open((dirs) => {
      const root = roots.wsAgents(dirs.workspace);
      writeSkill(root, "fine");
      // albedo takes this frontmatter; the SDK's parser does not (a multi-line quoted value).
      writeSkill(root, "quoted", `---\nname: quoted\ndescription: "one\n  two"\n---\nBody.\n`);
    });
    release(session);
    const named = byName((await listing).skills);
    expect(named.has("fine")).toBe(true);
    expect(session.view.snapshot.skills.map((s) => s.name)).toContain("quoted");
    expect(named.has("quoted")).toBe(false);
    expect(warnings.find((w) => w.path === "quoted")?.message).toMatch(/not published: SKILL.md frontmatter/);
  });
});

describe("P-5 offerSkillsOverMcp needs a high-level McpServer before it connects", () => {
  it("refuses a server that is already connected", async () => {
    const dirs = await sessionDirs();
    try {
      const session = await openSession(dirs, { kernel: "external" });
      const mcp = new McpServer({ name: "albedo-test", version: "1.0.0" });
      const [, serverSide] = InMemoryTransport.createLinkedPair();
      await mcp.connect(serverSide);
      expect(() => offerSkillsOverMcp(mcp, session)).toThrow(/attach skills before connecting the server/);
      await mcp.close();
      await session.close();
    } finally {
      await dirs.cleanup();
    }
  });
});
