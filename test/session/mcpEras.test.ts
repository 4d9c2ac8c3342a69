/**
 * The 2026-07-28 era from a real sandboxed kernel (M-6): a server that speaks only the new era is
 * reached by typed method and by `mcp.call`, `mcp.servers()` says its protocol, a link a tool
 * returns is an object the code reads, a task keeps the cell's `await` waiting past the time a
 * plain call would take (its status messages on the cell's stderr), an interrupt cancels the task on the server, and a project server in the
 * new era still waits for approval.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { McpApprovals, type McpServerEntry } from "../../src/mcp/index.js";
import { poll } from "../support/poll.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { run, sessionsPerTest, type SessionDirs } from "./fixtures.js";

const sessions = sessionsPerTest();
const ERA_SERVER = resolve("test/mcp/servers/era_server.py");
const STARTUP_MS = 120_000;
/** Where a project keeps the server's script, relative to its workspace. */
const PROJECT_SCRIPT = "tools/era_server.py";

const record = (dirs: SessionDirs) => join(dirs.root, "era-record.txt");
const recorded = (dirs: SessionDirs) => readFileSync(record(dirs), { encoding: "utf8", flag: "a+" }).split("\n").filter(Boolean);

function modern(dirs: SessionDirs): McpServerEntry {
  return { command: TEST_VENV_PYTHON, args: [ERA_SERVER, "modern"], env: { RECORD: record(dirs) }, startup_timeout_ms: STARTUP_MS } as McpServerEntry;
}

/** The same server as a project ships it: its script in the workspace, named relative to it (the script is copied there first). */
function projectModern(dirs: SessionDirs): McpServerEntry {
  return { ...modern(dirs), args: [PROJECT_SCRIPT, "modern"] } as McpServerEntry;
}

async function running(session: { mcp: { servers(): readonly { status: string }[] } }): Promise<void> {
  await poll(() => session.mcp.servers().every((server) => server.status !== "starting"), { timeoutMs: STARTUP_MS, what: "the servers to start" });
}

describe.skipIf(!HAVE_TEST_VENV)("M-6 a server that speaks only 2026-07-28, from a sandboxed kernel", () => {
  it("is reached by typed method and mcp.call, reports its protocol, and its links are read with mcp.read", async () => {
    const { session } = await sessions.open((d) => writeFileSync(join(d.stateDir, "settings.json"), JSON.stringify({ mcp: { servers: { notes: modern(d) } } })));
    await running(session);
    const out = await run(session, [
      "[status] = await mcp.servers()",
      "print(status['status'], status['era'], status['protocol'])",
      "print(await mcp.notes.shout('hi'))",
      "print(await mcp.call('notes.shout', {'text': 'there'}))",
      "link = await mcp.notes.link()",
      "print(type(link).__name__, link.uri, link.server, link.mime)",
      "print(await link.read())",
      "print(await mcp.read('notes://today'))",
    ].join("\n"));
    expect(out.split("\n")).toEqual([
      "running modern 2026-07-28",
      "{'result': 'HI'}",
      "{'result': 'THERE'}",
      "McpLink notes://today notes text/plain",
      "buy milk",
      "buy milk",
      "",
    ]);
  }, STARTUP_MS * 2);

  it("a task keeps the cell waiting until it ends, and an interrupt cancels it on the server (tasks/cancel)", async () => {
    const { session, dirs } = await sessions.open((d) => writeFileSync(join(d.stateDir, "settings.json"), JSON.stringify({ mcp: { servers: { notes: modern(d) } } })));
    await running(session);
    const waited = session.kernel.execute("print(await mcp.notes.slow(2))");
    let stdout = "";
    let stderr = "";
    waited.onOutput((output) => {
      const content = output.content as { name?: string; text?: string };
      if (output.header.msg_type === "stream") content.name === "stderr" ? (stderr += content.text ?? "") : (stdout += content.text ?? "");
    });
    expect(await waited.done).toMatchObject({ status: "ok" });
    expect(stdout).toBe("rested 2.0s as a task\n");
    // The task's status messages reach the cell as they change, as a progress notification's would.
    expect(stderr).toContain("mcp notes.slow: napping\n");
    expect(recorded(dirs).filter((line) => line.startsWith("tasks/get ")).length).toBeGreaterThan(1);

    const future = session.kernel.execute("await mcp.notes.slow(120)");
    await poll(() => recorded(dirs).filter((line) => line.startsWith("task ")).length === 2, { what: "the second task to start" });
    await session.kernel.interrupt();
    expect(await future.done).toMatchObject({ status: "error" });
    const task = recorded(dirs).filter((line) => line.startsWith("task ")).at(-1)!.slice("task ".length);
    await poll(() => recorded(dirs).includes(`tasks/cancel ${task}`), { what: "tasks/cancel to reach the server" });
    // The session goes on.
    expect(await run(session, "print(await mcp.notes.shout('after'))")).toBe("{'result': 'AFTER'}\n");
  }, STARTUP_MS * 2);

  it("a project server in the new era still waits for approval of its entry; approved, it starts in the new era", async () => {
    const { session, dirs } = await sessions.open(async (d) => {
      mkdirSync(join(d.workspace, "tools"));
      copyFileSync(ERA_SERVER, join(d.workspace, PROJECT_SCRIPT));
      mkdirSync(join(d.workspace, ".albedo"), { recursive: true });
      writeFileSync(join(d.workspace, ".albedo", "settings.json"), JSON.stringify({ mcp: { servers: { notes: projectModern(d) } } }));
    });
    const [waiting] = session.mcp.servers();
    expect(waiting).toMatchObject({ name: "notes", status: "disabled", origin: "project" });
    expect(waiting!.diagnostics.join("\n")).toContain("albedo mcp approve notes");
    expect(recorded(dirs)).toEqual([]);
    await (await McpApprovals.load(dirs.stateDir, dirs.workspace)).approve("notes", projectModern(dirs), dirs.workspace);
    await session.reload();
    await running(session);
    expect(session.mcp.servers()[0]).toMatchObject({ name: "notes", status: "running", era: "modern", origin: "project" });
  }, STARTUP_MS * 2);
});
