import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_BODY_DEPTH } from "../../src/daemon/limits.js";
import { MAX_SETTINGS_DEPTH } from "../../src/settings/index.js";
import { call } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

/** Opens tried against a broken settings file: more than MAX_SESSIONS, so a leak would fill the daemon. */
const FAILING_OPENS = 20;
/** Nesting the adversarial probe used: far past any bound, deep enough to overflow JSON.stringify. */
const HOSTILE_DEPTH = 20_000;

const fixture = daemonFixture();

/** JSON text of `depth` nested lists, e.g. 2 → `[[]]`. */
function nestedList(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** Every process below `pid` (children, grandchildren, …), read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // The command name may hold spaces or parentheses; the parent pid is the second field after its closing ")".
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()!) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

describe("D-2 D-4 B a project settings file nested too deep fails the open and leaves nothing behind", () => {
  it(`${FAILING_OPENS} opens each fail with 422 naming the file and MAX_SETTINGS_DEPTH; no session or kernel is left; a fixed file opens`, { timeout: 180_000 }, async () => {
    const { dirs } = fixture;
    const file = join(dirs.workspace, ".albedo", "settings.json");
    await mkdir(join(dirs.workspace, ".albedo"));
    await writeFile(file, `{"theme": ${nestedList(HOSTILE_DEPTH)}}`);
    const daemon = await fixture.start();
    for (let attempt = 0; attempt < FAILING_OPENS; attempt += 1) {
      const answer = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ code: "settings_file_invalid", file });
      expect(answer.body.detail).toContain(file);
      expect(answer.body.detail).toContain("MAX_SETTINGS_DEPTH");
    }
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([]);
    expect(descendants(daemon.process.pid!)).toEqual([]);

    await writeFile(file, `{"theme": ${nestedList(MAX_SETTINGS_DEPTH - 1)}}`);
    const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    expect(opened.status).toBe(201);
    expect((await call(daemon, "DELETE", `/sessions/${opened.body.id}`)).status).toBe(204);
  });
});

describe("D-1 D-4 B a request body nested too deep is refused with 400 too_deep", () => {
  it("PATCH /settings, POST /sessions/{id}/events and POST /sessions answer too_deep naming MAX_BODY_DEPTH, and the daemon keeps answering", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start();
    const deep = nestedList(HOSTILE_DEPTH);
    const answers = [
      await call(daemon, "PATCH", "/settings", `{"scope": "global", "kernel": ${deep}}`, { "if-match": '"absent"' }),
      await call(daemon, "POST", "/sessions/nope/events", `{"operation_id": "x", "type": "command", "command": "/demo", "arguments": ${deep}}`),
      await call(daemon, "POST", "/sessions", `{"workspace": ${JSON.stringify(dirs.workspace)}, "extensions": ${deep}}`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: "too_deep", limit: MAX_BODY_DEPTH });
      expect(answer.body.detail).toContain("MAX_BODY_DEPTH");
    }
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([]);
  });

  it("a body exactly MAX_BODY_DEPTH deep is read (and judged on its fields); one level more is too_deep", async () => {
    const daemon = await fixture.start();
    // The body object is one level; `kernel` holds the rest.
    const atBound = await call(daemon, "PATCH", "/settings", `{"scope": "global", "kernel": ${nestedList(MAX_BODY_DEPTH - 1)}}`, { "if-match": '"absent"' });
    expect(atBound.body.code).not.toBe("too_deep");
    expect(atBound.status).toBe(400);
    const over = await call(daemon, "PATCH", "/settings", `{"scope": "global", "kernel": ${nestedList(MAX_BODY_DEPTH)}}`, { "if-match": '"absent"' });
    expect(over.body).toMatchObject({ status: 400, code: "too_deep", limit: MAX_BODY_DEPTH });
  });
});
