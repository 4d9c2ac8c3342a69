import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_STATE_DIR_ENTRIES } from "../../src/daemon/index.js";
import { makeStateDirPrivate } from "../../src/daemon/state.js";
import { newOperationId } from "../../src/operations/index.js";
import { BIN, call, envFor, killDaemon, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

/** How long a refused `albedo serve` may take to exit; it never gets as far as listening. */
const REFUSAL_TIMEOUT_MS = 30_000;
/** PATCHes sent at once in one round, all carrying the revision read before it. */
const CONCURRENT_PATCHES = 20;
/** Rounds, each against the file the round before left. */
const ROUNDS = 5;

const fixture = daemonFixture();

/** Every regular file and directory under `dir` except the session run dirs (made private where they are created), with its mode. */
function modes(dir: string, prefix = ""): Record<string, number> {
  const found: Record<string, number> = {};
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const entry = lstatSync(path);
    if (entry.isDirectory() && prefix === "" && name === "run") found["run/"] = entry.mode & 0o777;
    else if (entry.isDirectory()) Object.assign(found, { [`${prefix}${name}/`]: entry.mode & 0o777 }, modes(path, `${prefix}${name}/`));
    else if (entry.isFile()) found[`${prefix}${name}`] = entry.mode & 0o777;
  }
  return found;
}

describe("D-1 every file the daemon keeps in the state dir is 0600 and every directory 0700, whatever the umask", () => {
  it.each(["022", "000"])("umask %s and a state dir made 0755 beforehand, with a 0644 log from the old launcher", async (umask) => {
    const { dirs } = fixture;
    chmodSync(dirs.state, 0o755);
    writeFileSync(join(dirs.state, "daemon.log"), "from the launcher's redirect\n", { mode: 0o644 });
    writeFileSync(join(dirs.state, "daemon.log.1"), "older\n", { mode: 0o644 });
    chmodSync(join(dirs.state, "daemon.log"), 0o644);
    chmodSync(join(dirs.state, "daemon.log.1"), 0o644);
    const args = ["--listen", "127.0.0.1:0", "--pool", "0", "--log-file", join(dirs.state, "daemon.log")];
    const daemon = await fixture.start(args, {}, { wrap: ["sh", "-c", `umask ${umask}; exec "$0" "$@"`] });
    const session = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, kernel: "external", kernel_pid: process.pid });
    expect(session.status).toBe(201);
    expect((await call(daemon, "POST", `/sessions/${session.body.id}/events`, { operation_id: newOperationId(), type: "message", text: "hi" })).status).toBe(202);
    const patch = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["x"] } }, { "if-match": '"absent"' });
    expect(patch.status).toBe(200);

    const found = modes(dirs.state);
    expect(Object.keys(found)).toEqual(expect.arrayContaining([
      "albedo.db", "albedo.db-wal", "albedo.db-shm", "daemon.log", "daemon.log.1", "daemon.token", "daemon.json", "daemon.lock", "settings.json", "run/",
    ]));
    const loose = Object.entries(found).filter(([name, mode]) => mode !== (name.endsWith("/") ? 0o700 : 0o600));
    expect(loose.map(([name, mode]) => `${name} ${mode.toString(8)}`)).toEqual([]);
    expect(statSync(dirs.state).mode & 0o777).toBe(0o700);
  });
});

describe(`D-1 making the state dir private looks at MAX_STATE_DIR_ENTRIES (${MAX_STATE_DIR_ENTRIES}) entries`, () => {
  it("tightens that many entries of a state dir that holds one more, and no more", async () => {
    const { dirs } = fixture;
    for (let n = 0; n <= MAX_STATE_DIR_ENTRIES; n += 1) writeFileSync(join(dirs.state, `f${n}`), "", { mode: 0o644 });
    await makeStateDirPrivate(dirs.state);
    const found = Object.values(modes(dirs.state));
    expect(found.filter((mode) => mode === 0o600)).toHaveLength(MAX_STATE_DIR_ENTRIES);
    expect(found.filter((mode) => mode === 0o644)).toHaveLength(1);
  });
});

/** Runs `albedo serve` to its end; it must refuse before listening. */
function serveOnce(target: Dirs): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0", "--pool", "0", "--log-file", join(target.state, "daemon.log")], {
    env: envFor(target),
    encoding: "utf8",
    timeout: REFUSAL_TIMEOUT_MS,
    // A daemon that wrongly starts is ended for sure, not asked to close.
    killSignal: "SIGKILL",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("O-1 D-1 B albedo serve refuses an unusable albedo.db (truncated, corrupt, a directory), naming it and saying what to do", () => {
  it("a 0-byte albedo.db: exit 1, the message names the file and says it was truncated; the file is left as found", async () => {
    const { dirs } = fixture;
    const db = join(dirs.state, "albedo.db");
    writeFileSync(db, "");
    const run = serveOnce(dirs);
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain("listening");
    expect(run.stderr).toContain(`${db} is empty (0 bytes); it was truncated — move it aside to start with no receipts, or restore it from a backup`);
    expect(readFileSync(join(dirs.state, "daemon.log"), "utf8")).toContain(`${db} is empty (0 bytes)`);
    expect(statSync(db).size).toBe(0);
  });

  it("a file of garbage: exit 1, the message names the file and says it is not a SQLite database; the file is left as found", async () => {
    const { dirs } = fixture;
    const db = join(dirs.state, "albedo.db");
    const garbage = Buffer.alloc(8192, "not a database, just bytes\n");
    writeFileSync(db, garbage);
    const run = serveOnce(dirs);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${db} is not a usable SQLite database (file is not a database) — move it aside to start with no receipts, or restore it from a backup`);
    expect(readFileSync(db).equals(garbage)).toBe(true);
  });

  it("a directory at albedo.db: exit 1, the message names it, says it is a directory and what to do; it is left as found", async () => {
    const { dirs } = fixture;
    const db = join(dirs.state, "albedo.db");
    mkdirSync(db, { recursive: true });
    writeFileSync(join(db, "kept"), "mine");
    const run = serveOnce(dirs);
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain("listening");
    expect(run.stderr).toContain(`${db} is a directory, not a database file — move it out of the way (albedo then creates a new database, with no receipts)`);
    expect(readdirSync(db)).toEqual(["kept"]);
  });

  it("a directory where SQLite keeps albedo.db-wal: exit 1, the message names albedo.db and the files beside it", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    await killDaemon(daemon, "SIGTERM");
    const db = join(dirs.state, "albedo.db");
    rmSync(`${db}-wal`, { force: true });
    mkdirSync(`${db}-wal`);
    const run = serveOnce(dirs);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${db} cannot be opened (SQLITE_CANTOPEN: unable to open database file) — check that it and its -wal and -shm files beside it are regular files`);
  });

  it("with the file moved aside, the next start begins with an empty database", async () => {
    const { dirs } = fixture;
    writeFileSync(join(dirs.state, "albedo.db"), "");
    expect(serveOnce(dirs).status).toBe(1);
    const db = join(dirs.state, "albedo.db");
    renameSync(db, `${db}.broken`);
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    expect(daemon.stdout()).toContain("abandoned 0 running and 0 queued turns of the sessions before the restart");
    expect(statSync(db).size).toBeGreaterThan(0);
    expect(statSync(db).mode & 0o777).toBe(0o600);
  });
});

describe("D-4 D-1 concurrent PATCH /settings with one If-Match: the revision check and the write are one step", () => {
  it(`${CONCURRENT_PATCHES} at once, ${ROUNDS} rounds: exactly one 200 and the rest 409 catalog_changed; the file holds exactly that one change`, { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const file = join(dirs.state, "settings.json");
    const kept: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const revision = (await call(daemon, "GET", "/settings")).body.global.revision as string;
      const names = Array.from({ length: CONCURRENT_PATCHES }, (_, n) => `r${round}-n${n}`);
      const answers = await Promise.all(names.map((name) => call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: [name] } }, { "if-match": `"${revision}"` })));
      const won = answers.flatMap((answer, n) => (answer.status === 200 ? [names[n]!] : []));
      expect(won).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 409 && answer.body.code === "catalog_changed")).toHaveLength(CONCURRENT_PATCHES - 1);
      kept.push(won[0]!);
      const onDisk = JSON.parse(readFileSync(file, "utf8")) as { skills: { off: string[] } };
      expect(onDisk.skills.off).toEqual(kept);
      expect(answers.find((answer) => answer.status === 200)!.headers.get("etag")).toBe(`"${(await call(daemon, "GET", "/settings")).body.global.revision}"`);
    }
  });
});
