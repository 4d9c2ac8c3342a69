import { createServer, type Server } from "node:net";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "./fixtures.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { roots, writeSkill } from "../support/skills.js";

/** Sandboxed sessions need bubblewrap: without it this suite is skipped (test/support/sandbox.ts says so once), and CI requires it. */
let dirs: SessionDirs;
let session: Session;
let neighbour: Session;
let server: Server;
let port: number;

beforeAll(async () => {
  if (NO_SANDBOX) return;
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
  await writeFile(join(dirs.stateDir, "daemon.token"), "secret-token\n", { mode: 0o600 });
  await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify({ sandbox: "required", limits: { processes: 64, memoryMB: 1024 } }));
  session = await openSession(dirs);
  neighbour = await openSession(dirs);
  server = createServer((socket) => socket.end("hello from the host\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server?.close();
  await session?.close();
  await neighbour?.close();
  await dirs?.cleanup();
});

/** Runs `attempt` in the kernel and prints "blocked <ExceptionName>" or "ALLOWED". */
function attempt(code: string): string {
  const body = code.split("\n").map((line) => `    ${line}`).join("\n");
  return `try:\n${body}\n    print("ALLOWED")\nexcept BaseException as e:\n    print("blocked", type(e).__name__)`;
}

describe.skipIf(NO_SANDBOX)("K-10 escape attempts from inside a sandboxed kernel fail", () => {
  it("runs the kernel under bubblewrap when the global setting requires it", () => {
    expect(session.status().sandbox).toBe("bwrap");
  });

  it("cannot read the daemon token or the settings file", async () => {
    expect(await run(session, attempt(`open(${JSON.stringify(join(dirs.stateDir, "daemon.token"))}).read()`))).toMatch(/^blocked/);
    expect(await run(session, attempt(`open(${JSON.stringify(join(dirs.stateDir, "settings.json"))}).read()`))).toMatch(/^blocked/);
  });

  it("sees only its own run dir and cannot connect to another session's RPC socket", async () => {
    const listing = await run(session, `import os\nprint(sorted(os.listdir(${JSON.stringify(join(dirs.stateDir, "run"))})))`);
    expect(listing.trim()).toBe(`['${basename(session.runDir)}']`);
    const other = join(neighbour.runDir, "rpc");
    expect(await run(session, attempt(`import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(other)})`))).toMatch(/^blocked/);
  });

  it("cannot open a TCP connection to the host", async () => {
    expect(await run(session, attempt(`import socket\nsocket.create_connection(("127.0.0.1", ${port}), timeout=3)`))).toMatch(/^blocked/);
  });

  it("cannot write outside the workspace, and can write inside it", async () => {
    expect(await run(session, attempt("open('/etc/albedo-escape', 'w').write('x')"))).toMatch(/^blocked/);
    expect(await run(session, attempt(`open(${JSON.stringify(join(dirs.home, "escape"))}, 'w').write('x')`))).toBe("ALLOWED\n");
    expect(await run(session, "import os\nprint(os.path.exists(" + JSON.stringify(join(dirs.home, "escape")) + "))")).toBe("True\n");
    await expect(import("node:fs/promises").then((fs) => fs.access(join(dirs.home, "escape")))).rejects.toThrow();
    expect(await run(session, attempt("open('inside.txt', 'w').write('ok')"))).toBe("ALLOWED\n");
  });

  it("cannot create a skill root, and skills.read refuses a link toward a file its sandbox hides", async () => {
    const created = await run(session, attempt("import os\nos.makedirs('.albedo/skills/planted')"));
    expect(created).toBe("blocked OSError\n");
    // Planted from outside the sandbox (as an unsandboxed process, or an older runtime, could have).
    const planted = join(dirs.workspace, ".albedo", "skills", "planted");
    await mkdir(planted, { recursive: true });
    await writeFile(join(planted, "SKILL.md"), "---\nname: planted\ndescription: A planted skill.\n---\nbody\n");
    await symlink(join(dirs.stateDir, "daemon.token"), join(planted, "key"));
    await writeFile(join(dirs.workspace, "notes.txt"), "workspace text");
    await symlink(join(dirs.workspace, "notes.txt"), join(planted, "notes"));
    const out = await run(session, [
      "import albedo",
      "await commands.invoke('/reload', 'session')",
      "try:\n    await skills.read('planted', 'key')\n    print('LEAKED')\nexcept albedo.Forbidden as e:\n    print('forbidden')",
      "print((await skills.read('planted', 'notes'))['content'])",
      "r = await skills.resources('planted')",
      "print(sorted(r['resources']), [x['code'] for x in r['diagnostics']])",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["forbidden", "workspace text", "['SKILL.md', 'notes'] ['outside_sandbox']"]);
  });

  it("still serves skills through the RPC channel", async () => {
    expect(await run(session, "print((await commands.demo('x'))['instructions'])")).toBe("Do the demo thing.\n");
  });

  it("stops a fork bomb at the process cap; the runtime and the other session carry on", async () => {
    const out = await run(session, [
      "import os, time",
      "children = []",
      "try:",
      "    for _ in range(10_000):",
      "        pid = os.fork()",
      "        if pid == 0:",
      "            time.sleep(30)",
      "            os._exit(0)",
      "        children.append(pid)",
      "    print('not stopped', len(children))",
      "except OSError as e:",
      "    print('stopped', type(e).__name__)",
      "finally:",
      "    for pid in children:",
      "        os.kill(pid, 9)",
      "    for pid in children:",
      "        os.waitpid(pid, 0)",
    ].join("\n"));
    expect(out.trim()).toMatch(/^stopped/);
    expect(await run(neighbour, "print(1 + 1)")).toBe("2\n");
    expect(await run(session, "print('alive')")).toBe("alive\n");
  });

  it("stops memory exhaustion at the address-space limit", async () => {
    expect(await run(session, attempt("blob = bytearray(2 * 1024 ** 3)"))).toBe("blocked MemoryError\n");
    expect(await run(neighbour, "print('fine')")).toBe("fine\n");
  });
});
