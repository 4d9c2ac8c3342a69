/**
 * Skills over MCP (SEP-2640) on a 2.x SDK server: `skills/list`, `skills/get`,
 * `resources/directory/read` and the whole-file reads of `skill://NAME/PATH` that hosts verify
 * against each entry's digests. The entries are built from the session's current catalog (its
 * enabled skills, as the `skill` tool and the `skill://` resources see them); every file is read
 * through the session's guarded, pinned access (R-2, R-4), and a file a link takes out of its
 * skill's directory is not served. A reload that changes a skill's files changes its digests.
 */
import { createHash } from "node:crypto";
import { realpath } from "node:fs/promises";
import { join, sep } from "node:path";
import type { McpServer, Server, ServerContext } from "@modelcontextprotocol/server";
import {
  DIRECTORY_MIME_TYPE, SKILL_LIMITS, SkillCatalogError, SkillsExtension, skillEntry,
  type DirectoryResource, type Skill, type SkillCatalogChanges, type SkillReadResult, type SkillSource, type SkillWarning,
} from "@modelcontextprotocol/server/ext/skills";
import { decodeUtf8 } from "../json/index.js";
import type { Disposable } from "../platform/index.js";
import { MAX_READ_LIMIT, type CatalogSnapshot, type SkillEntry } from "../skills/index.js";
import type { ServedSession } from "./host.js";
import { DIRECTORY_PAGE_SIZE, MAX_PUBLISHED_SKILL_BYTES, SKILLS_PAGE_SIZE } from "./limits.js";
import { resourceMime } from "./uris.js";

/** What Skills over MCP needs of a session: its current view (the enabled skills), its guarded file access, its catalog swaps. */
export type SkillsSession = Pick<ServedSession, "view" | "skills" | "catalog">;

export interface SkillsOverMcpOptions {
  /** Where problems go (a skill the extension cannot publish, a link out of a skill, a file changed since publication). Default: stderr. */
  readonly onWarning?: (warning: SkillWarning) => void;
  /**
   * Told after a catalog swap changed what Skills over MCP serves, once the new entries are
   * published; attached servers that are still connected have been sent `resources/list_changed`
   * when `listChanged`. Servers built per request (createMcpHandler) are gone by then: publish the
   * change on the handler here (`handler.notify.resourcesChanged()`).
   */
  readonly onChange?: (changes: SkillCatalogChanges) => void;
}

/** Where a skill that cannot be published, or a file changed since, is said by default: one line on stderr. */
const defaultWarning = (warning: SkillWarning): void => void process.stderr.write(`albedo: skills over MCP: ${warning.path}: ${warning.message}\n`);

/** The scheme of albedo's skill resources, which the extension's entries share. */
const BASE_URI = "skill://";

/** One published file of a skill: where it is, and the size and digest its entry carries. */
interface PublishedFile {
  readonly skill: SkillEntry;
  readonly path: string;
  readonly size: number;
  readonly digest: string;
}

/** What one catalog snapshot publishes: entries sorted by URI, files and directories by (skill, path). */
interface Published {
  readonly snapshot: CatalogSnapshot;
  readonly skills: readonly Skill[];
  readonly byName: ReadonlyMap<string, Skill>;
  readonly files: ReadonlyMap<string, PublishedFile>;
  readonly dirs: ReadonlyMap<string, readonly DirectoryResource[]>;
}

/** A key for (skill, path) that no skill name can forge: names never hold NUL. */
const keyOf = (skill: string, path: string): string => `${skill}\0${path}`;

/**
 * The session's skills as a SkillSource, and the extension built on it. One instance per session
 * serves any number of servers (`attach` each, before it connects); its entries follow the
 * session's view: a request after a catalog swap sees the new one, and the swap itself publishes
 * it and announces the change.
 */
export class SkillsOverMcp {
  readonly extension: SkillsExtension;
  /** The session's skills as the extension asks for them. */
  readonly source: SkillSource;
  private published: Published | undefined;
  private building: { snapshot: CatalogSnapshot; done: Promise<Published> } | undefined;
  private readonly servers = new Set<WeakRef<McpServer>>();
  private watching: Disposable | undefined;
  private disposed = false;
  private readonly warn: (warning: SkillWarning) => void;

  constructor(
    private readonly session: Promise<SkillsSession>,
    private readonly options: SkillsOverMcpOptions = {},
  ) {
    this.warn = options.onWarning ?? defaultWarning;
    this.source = this.sourceOf();
    this.extension = new SkillsExtension({ source: this.source, baseUri: BASE_URI, onWarning: this.warn });
    session.then(
      (served) => {
        if (!this.disposed) this.watching = served.catalog.onChange(() => void this.announce());
      },
      () => undefined, // a session that never opened: every request says so (current() rethrows)
    );
  }

  /** Serves these skills on `mcp` (an McpServer, before it connects); attaching the same server again does nothing. */
  attach(mcp: McpServer): void {
    this.extension.attach(mcp);
    this.servers.add(new WeakRef(mcp));
  }

  /** Publishes the session's current catalog now and says what changed against what was published before. */
  async refresh(): Promise<SkillCatalogChanges> {
    const previous = this.published;
    const next = await this.current();
    return changesBetween(previous, next);
  }

  /** Stops following the session's catalog swaps. */
  dispose(): void {
    this.disposed = true;
    this.watching?.dispose();
    this.servers.clear();
  }

  private async announce(): Promise<void> {
    let changes: SkillCatalogChanges;
    try {
      changes = await this.refresh();
    } catch (error) {
      this.warn({ path: "skills", message: `could not be published after a reload: ${errorText(error)}` });
      return;
    }
    if (changes.added.length + changes.removed.length + changes.changed.length === 0) return;
    if (changes.listChanged) {
      for (const reference of this.servers) {
        const mcp = reference.deref();
        if (mcp === undefined) this.servers.delete(reference);
        else if (mcp.isConnected()) void Promise.resolve(mcp.server.sendResourceListChanged()).catch(() => undefined);
      }
    }
    this.options.onChange?.(changes);
  }

  /** The entries of the session's current snapshot: published once per snapshot, by one build at a time. */
  private async current(): Promise<Published> {
    const session = await this.session;
    const snapshot = session.view.snapshot;
    if (this.published?.snapshot === snapshot) return this.published;
    if (this.building?.snapshot !== snapshot) {
      const done = publish(session, snapshot, this.warn);
      this.building = { snapshot, done };
      done.then(
        (published) => {
          // A slower build of an older snapshot never replaces a newer one.
          if (session.view.snapshot === published.snapshot) this.published = published;
        },
        () => undefined,
      );
    }
    return await this.building.done;
  }

  /**
   * The published file `uri` names (a plain `skill://NAME/PATH`), whole and checked against its
   * digest, when it is at most `maxBytes`; undefined for an address that is not one, or a file
   * larger (read it in pages).
   */
  async readWhole(uri: string, maxBytes: number): Promise<SkillReadResult | undefined> {
    const named = parseUri(uri);
    if (named === undefined) return undefined;
    const file = (await this.current()).files.get(keyOf(named.skill, named.path));
    return file === undefined || file.size > maxBytes ? undefined : await this.readPublished(file);
  }

  private sourceOf(): SkillSource {
    return {
      list: async ({ cursor }) => {
        const { skills } = await this.current();
        const page = pageOf(skills, cursor, SKILLS_PAGE_SIZE);
        return { skills: page.items, ...(page.next === undefined ? {} : { nextCursor: page.next }) };
      },
      get: async (uri) => {
        const named = parseUri(uri);
        if (named === undefined || named.path !== "SKILL.md") return undefined;
        return (await this.current()).byName.get(named.skill);
      },
      read: async (uri, _ctx: ServerContext) => {
        // albedo's own page addresses (`?offset=N`, P-4) fall under the extension's `skill://` template too.
        const paged = /^([^?#]*)\?offset=(\d{1,15})$/.exec(uri);
        const named = parseUri(paged === null ? uri : paged[1]!);
        if (named === undefined) return undefined;
        const published = await this.current();
        const file = published.files.get(keyOf(named.skill, named.path));
        if (file === undefined) return undefined;
        return paged === null ? await this.readPublished(file) : await this.readPage(file, Number(paged[2]));
      },
      readDirectory: async (uri, { cursor }) => {
        const named = parseUri(uri.replace(/\/+$/, ""), true);
        if (named === undefined) return undefined;
        const children = (await this.current()).dirs.get(keyOf(named.skill, named.path));
        if (children === undefined) return undefined;
        const page = pageOf(children, cursor, DIRECTORY_PAGE_SIZE);
        return { resources: page.items, ...(page.next === undefined ? {} : { nextCursor: page.next }) };
      },
    };
  }

  /** One page (R-2) of a published file from byte `offset`: what `skill://NAME/PATH?offset=N` names; not checked against the digest. */
  private async readPage(file: PublishedFile, offset: number): Promise<SkillReadResult> {
    const session = await this.session;
    const page = await containedRead(file.skill, file.path, () => session.skills.read(file.skill.name, file.path, offset, MAX_READ_LIMIT));
    const mimeType = resourceMime(file.path);
    return page.encoding === "utf-8" ? { text: page.content, mimeType } : { bytes: new Uint8Array(Buffer.from(page.content, "base64")), mimeType };
  }

  /** A published file as it is now, only if it is still the one its entry describes. */
  private async readPublished(file: PublishedFile): Promise<SkillReadResult> {
    const session = await this.session;
    const bytes = await readContained(session, file.skill, file.path, { bytes: SKILL_LIMITS.bytes, limit: `SKILL_LIMITS.bytes = ${SKILL_LIMITS.bytes} per skill` });
    if (bytes.length !== file.size || sha256(bytes) !== file.digest) {
      this.warn({ path: `${file.skill.name}/${file.path}`, message: "changed since its skill was published; reload the session" });
      throw new Error(`skill://${file.skill.name}/${file.path} changed since the skill was published: reload the session (/reload session, or the reload tool), then get the skill again`);
    }
    const text = decodeUtf8(bytes);
    const mimeType = resourceMime(file.path);
    return text !== undefined && !text.includes("\0") ? { text, mimeType } : { bytes, mimeType };
  }
}

/**
 * Serves the session's skills over MCP on `mcp` (a high-level McpServer, before it connects) and
 * keeps them current across reloads. `session` may still be opening (a server whose workspace
 * comes from the client's roots): requests wait for it. Pass the returned object's `attach` any
 * further server of the same session; `dispose` it when the session closes.
 */
export function offerSkillsOverMcp(mcp: McpServer, session: SkillsSession | Promise<SkillsSession>, options: SkillsOverMcpOptions = {}): SkillsOverMcp {
  const skills = new SkillsOverMcp(Promise.resolve(session), options);
  try {
    skills.attach(mcp);
  } catch (error) {
    skills.dispose();
    throw error;
  }
  return skills;
}

/** One publisher per session, whatever number of server instances serve it (an HTTP endpoint builds one per request). */
const publishers = new WeakMap<SkillsSession, SkillsOverMcp>();

function publisherOf(session: SkillsSession): SkillsOverMcp {
  let publisher = publishers.get(session);
  if (publisher === undefined) {
    publisher = new SkillsOverMcp(Promise.resolve(session));
    publishers.set(session, publisher);
  }
  return publisher;
}

/** Reads a published skill file whole, checked against its digest; undefined when `uri` is no such file or it is over `maxBytes`. */
export type WholeSkillRead = (uri: string, maxBytes: number) => Promise<SkillReadResult | undefined>;

/**
 * Serves Skills over MCP on albedo's low-level `server`, before it connects, in either era:
 * `skills/list`, `skills/get` and `resources/directory/read` are the SDK extension's, over the
 * session `session()` finds for each request (its publisher shared by every server of that
 * session, so entries are built once per catalog snapshot). albedo's own `resources/*` handlers
 * stay: the answer is the whole-file read they give a plain `skill://` address, so a host can check
 * what it reads against the entry's digest. Announcing reloads is the server's own (it sends
 * `resources/list_changed` after every one).
 */
export function attachSkillsOverMcp(server: Server, session: () => Promise<SkillsSession>): WholeSkillRead {
  const of = async () => publisherOf(await session()).source;
  const delegated: SkillSource = {
    list: async (params, ctx) => (await of()).list(params, ctx),
    get: async (uri, ctx) => (await of()).get(uri, ctx),
    read: async (uri, ctx) => (await of()).read(uri, ctx),
    readDirectory: async (uri, params, ctx) => (await of()).readDirectory!(uri, params, ctx),
  };
  const extension = new SkillsExtension({ source: delegated, baseUri: BASE_URI, onWarning: defaultWarning });
  // The extension attaches to a high-level McpServer: albedo's server is the low-level one under
  // it, and albedo's resources/read keeps answering skill:// addresses (its template is not registered).
  const host = { server, isConnected: () => false, registerResource: () => undefined } as unknown as McpServer;
  extension.attach(host);
  return async (uri, maxBytes) => publisherOf(await session()).readWhole(uri, maxBytes);
}

/** Builds the entries of every enabled skill of `snapshot`; a skill that cannot be published is left out with a warning. */
async function publish(session: SkillsSession, snapshot: CatalogSnapshot, warn: (warning: SkillWarning) => void): Promise<Published> {
  const skills: Skill[] = [];
  const files = new Map<string, PublishedFile>();
  const dirs = new Map<string, DirectoryResource[]>();
  let spent = 0;
  for (const entry of snapshot.skills) {
    const left = MAX_PUBLISHED_SKILL_BYTES - spent;
    const budget: Budget = left < SKILL_LIMITS.bytes
      ? { bytes: left, limit: `MAX_PUBLISHED_SKILL_BYTES = ${MAX_PUBLISHED_SKILL_BYTES} over all skills` }
      : { bytes: SKILL_LIMITS.bytes, limit: `SKILL_LIMITS.bytes = ${SKILL_LIMITS.bytes} per skill` };
    const built = await publishSkill(session, entry, budget, warn).catch((error: unknown) => {
      warn({ path: entry.name, message: `not published: ${errorText(error)}` });
      return undefined;
    });
    if (built === undefined) continue;
    spent += built.files.reduce((sum, file) => sum + file.size, 0);
    skills.push(built.skill);
    for (const file of built.files) files.set(keyOf(entry.name, file.path), file);
    for (const [dir, children] of built.dirs) dirs.set(keyOf(entry.name, dir), children);
  }
  skills.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  return { snapshot, skills, byName: new Map(skills.map((skill) => [skill.frontmatter.name, skill])), files, dirs };
}

/** Codes of listing diagnostics that mean the listing is incomplete: such a skill cannot be published with a full set of digests. */
const CUT_CODES = new Set(["resource_limit", "resource_entries_limit", "resource_depth_limit", "diagnostic_limit"]);

/** Bytes a read may still take, and the limit that says so (named in the refusal). */
interface Budget {
  readonly bytes: number;
  readonly limit: string;
}

/** One skill's entry, files and directories; undefined (with a warning) when it cannot be published whole. */
async function publishSkill(
  session: SkillsSession,
  entry: SkillEntry,
  budget: Budget,
  warn: (warning: SkillWarning) => void,
): Promise<{ skill: Skill; files: PublishedFile[]; dirs: Map<string, DirectoryResource[]> } | undefined> {
  const listing = await session.skills.resources(entry.name);
  const cut = listing.diagnostics.find((d) => CUT_CODES.has(d.code));
  if (cut !== undefined) {
    warn({ path: entry.name, message: `not published: its file listing is incomplete (${cut.message})` });
    return undefined;
  }
  const paths: string[] = [];
  for (const path of listing.resources) {
    if (await inside(entry, path)) paths.push(path);
    else warn({ path: `${entry.name}/${path}`, message: "resolves outside its skill's directory; not served" });
  }
  if (paths.length > SKILL_LIMITS.files) {
    warn({ path: entry.name, message: `not published: ${paths.length} files; the limit is SKILL_LIMITS.files = ${SKILL_LIMITS.files}` });
    return undefined;
  }
  const contents: Record<string, Uint8Array> = {};
  let total = 0;
  for (const path of paths) {
    const bytes = await readContained(session, entry, path, { bytes: budget.bytes - total, limit: budget.limit });
    total += bytes.length;
    contents[path] = bytes;
  }
  let skill: Skill;
  try {
    skill = await skillEntry(entry.name, contents, { baseUri: BASE_URI });
  } catch (error) {
    if (!(error instanceof SkillCatalogError)) throw error;
    warn({ path: entry.name, message: `not published: ${error.problems.map((p) => p.message).join("; ")}` });
    return undefined;
  }
  const files = paths.map((path) => ({ skill: entry, path, size: contents[path]!.length, digest: sha256(contents[path]!) }));
  return { skill, files, dirs: directoriesOf(skill) };
}

/** The children of each directory of a skill (`""` is its root) as resources/directory/read lists them, from its entry's files. */
function directoriesOf(skill: Skill): Map<string, DirectoryResource[]> {
  const root = skill.uri.slice(0, -"SKILL.md".length);
  const dirs = new Map<string, Map<string, DirectoryResource>>([["", new Map()]]);
  const childrenOf = (dir: string) => {
    let found = dirs.get(dir);
    if (found === undefined) dirs.set(dir, (found = new Map()));
    return found;
  };
  for (const resource of skill.resources === "dynamic" ? [] : skill.resources) {
    const encoded = resource.uri.slice(root.length).split("/");
    const segments = encoded.map(decodeURIComponent);
    for (let depth = 1; depth <= segments.length; depth++) {
      const name = segments[depth - 1]!;
      const leaf = depth === segments.length;
      childrenOf(segments.slice(0, depth - 1).join("/")).set(name, leaf
        ? { uri: resource.uri, name, mimeType: resourceMime(name), size: resource.size }
        : { uri: `${root}${encoded.slice(0, depth).join("/")}`, name, mimeType: DIRECTORY_MIME_TYPE });
    }
  }
  return new Map([...dirs].map(([dir, children]) => [dir, [...children.values()].sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0))]));
}

/** Whether `path` of the skill resolves inside the skill's real directory (SKILL.md may itself be a link, as albedo allows). */
async function inside(entry: SkillEntry, path: string): Promise<boolean> {
  const real = await realpath(join(entry.dir, ...path.split("/"))).catch(() => undefined);
  if (real === undefined) return false;
  if (path === "SKILL.md" && real === entry.resolvedSource) return true;
  return real.startsWith(entry.resolvedDir + sep);
}

/**
 * A whole file of a skill through the session's guarded, pinned page reads (R-2, R-4), at most
 * `budget` bytes, refused when a link takes it out of the skill's directory before or after the read.
 */
async function readContained(session: SkillsSession, entry: SkillEntry, path: string, budget: Budget): Promise<Uint8Array> {
  return await containedRead(entry, path, async () => {
    const chunks: Buffer[] = [];
    let total = 0;
    let size: number | undefined;
    for (let offset: number | null = 0; offset !== null; ) {
      const page = await session.skills.read(entry.name, path, offset, MAX_READ_LIMIT);
      if (size !== undefined && page.size !== size) throw new Error(`skill://${entry.name}/${path} changed while it was read; read it again`);
      size = page.size;
      if (size > budget.bytes) throw new Error(`skill://${entry.name}/${path} is ${size} bytes, past what is left of ${budget.limit}`);
      const chunk = Buffer.from(page.content, page.encoding === "base64" ? "base64" : "utf8");
      chunks.push(chunk);
      total += chunk.length;
      if (total > budget.bytes) throw new Error(`skill://${entry.name}/${path} grew past what is left of ${budget.limit} while it was read`);
      offset = page.next_offset;
    }
    return new Uint8Array(Buffer.concat(chunks));
  });
}

/** `read`, refused when a link takes the file out of its skill's directory before or after it. */
async function containedRead<T>(entry: SkillEntry, path: string, read: () => Promise<T>): Promise<T> {
  const outside = () => new Error(`skill://${entry.name}/${path} resolves outside the skill's directory; it is not served`);
  if (!(await inside(entry, path))) throw outside();
  const result = await read();
  if (!(await inside(entry, path))) throw outside();
  return result;
}

/** The skill and path a `skill://NAME/PATH` address names (the root of a skill when `directory`); undefined for anything else. */
function parseUri(uri: string, directory = false): { skill: string; path: string } | undefined {
  if (!uri.startsWith(BASE_URI) || /[?#]/.test(uri)) return undefined;
  let segments: string[];
  try {
    segments = uri.slice(BASE_URI.length).split("/").map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return undefined;
  if (segments.length < (directory ? 1 : 2)) return undefined;
  return { skill: segments[0]!, path: segments.slice(1).join("/") };
}

/** One page of `items` from an opaque cursor (an index albedo handed out). */
function pageOf<T>(items: readonly T[], cursor: string | undefined, size: number): { items: T[]; next?: string } {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0 || start > items.length) throw new Error(`cursor "${String(cursor).slice(0, 40)}" is not one albedo handed out`);
  const end = Math.min(items.length, start + size);
  return { items: items.slice(start, end), ...(end < items.length ? { next: String(end) } : {}) };
}

/** What changed between two publications, as the SDK's catalogs report it. */
function changesBetween(previous: Published | undefined, next: Published): SkillCatalogChanges {
  const before = new Map((previous?.skills ?? []).map((skill) => [skill.uri, skill]));
  const after = new Map(next.skills.map((skill) => [skill.uri, skill]));
  const listed = (skills: readonly Skill[]) => JSON.stringify(skills.map((s) => [s.uri, s.frontmatter.name, s.frontmatter.description]));
  return {
    added: [...after.keys()].filter((uri) => !before.has(uri)),
    removed: [...before.keys()].filter((uri) => !after.has(uri)),
    changed: [...after.keys()].filter((uri) => before.has(uri) && JSON.stringify(before.get(uri)) !== JSON.stringify(after.get(uri))),
    listChanged: listed(previous?.skills ?? []) !== listed(next.skills),
  };
}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
