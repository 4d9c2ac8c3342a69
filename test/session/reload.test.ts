import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELOAD_ROUTE_TIMEOUT_MS, type Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { reloadText } from "../../src/commands/text.js";

let dirs: SessionDirs;
let session: Session;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
  writeSkill(roots.wsAgents(dirs.workspace), "pdf-processing");
  session = await openSession(dirs);
});

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

describe("K-3 namespaces at kernel start", () => {
  it("has skills and commands in the user namespace and importable from albedo, with no history entry", async () => {
    const out = await run(session, [
      "from albedo import skills as s2, commands as c2",
      "print(s2 is skills, c2 is commands)",
      "print(len(In), len(_ih))",
    ].join("\n"));
    const [same, history] = out.trim().split("\n");
    expect(same).toBe("True True");
    // The injection left no input; In/_ih hold only the blank entry 0 and this cell.
    expect(history).toBe("2 2");
  });
});

describe("C-4 Python API", () => {
  it("mints typed methods with signatures and docstrings; - becomes _", async () => {
    const out = await run(session, [
      "import inspect",
      "print(inspect.signature(commands.pdf_processing))",
      "print('pdf-processing' in commands.pdf_processing.__doc__)",
      "print(hasattr(commands, 'status'), hasattr(commands, 'model'))",
    ].join("\n"));
    const [signature, doc, builtins] = out.trim().split("\n");
    expect(signature).toContain("arguments");
    expect(doc).toBe("True");
    // /status is model-callable and minted; /model is user-only and is not.
    expect(builtins).toBe("True False");
  });

  it("C-5 returns the activation to the Python call: name, description, source, arguments, instructions", async () => {
    const out = await run(session, [
      "import json",
      "a = await commands.demo('merge these   files')",
      "print(json.dumps(a, sort_keys=True))",
    ].join("\n"));
    const activation = JSON.parse(out);
    expect(activation).toEqual({
      name: "demo",
      description: "The demo skill.",
      source: join(dirs.workspace, ".agents", "skills", "demo", "SKILL.md"),
      arguments: "merge these   files",
      instructions: "Do the demo thing.",
    });
  });

  it("runs commands by slash name with raw text or an object, and lists the catalog", async () => {
    const out = await run(session, [
      "c = await commands.catalog()",
      "print(sorted(x['name'] for x in c['commands'] if x.get('skill') in ('demo', 'pdf-processing', 'research')))",
      "print((await commands.invoke('/demo', {'arguments': 'x'}))['arguments'])",
      "print((await commands.invoke('/status'))['skills'])",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["['/demo', '/pdf-processing', '/research']", "x", String(session.view.snapshot.skills.length)]);
  });

  it("raises typed exceptions carrying the RPC code", async () => {
    const out = await run(session, [
      "import albedo",
      "try:\n    await skills.read('demo', '../etc/passwd')\nexcept albedo.InvalidParams as e:\n    print(type(e).__name__, e.code)",
      "try:\n    await skills.read('nope')\nexcept albedo.NotFound as e:\n    print(type(e).__name__, e.code)",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["InvalidParams invalid_params", "NotFound not_found"]);
  });
});

describe("K-7 reload swaps snapshot and routes in one step", () => {
  it("answers every call in a stream from exactly one snapshot while reloads race it", async () => {
    await run(session, "x_before_reload = 42\nimport os\npid_before = os.getpid()\ndemo_method = commands.demo");
    const namesByRevision = new Map<string, string>();
    namesByRevision.set(session.view.snapshot.revision, session.view.snapshot.skills.map((s) => s.name).join(","));
    const hammer = session.kernel.execute([
      "import asyncio, json",
      "seen = []",
      "for i in range(300):",
      "    r = await skills.list()",
      "    seen.append([r['revision'], ','.join(s['name'] for s in r['skills'])])",
      "    c = await commands.catalog()",
      "    seen.append([c['revision'], ','.join(x['skill'] for x in c['commands'] if x.get('skill'))])",
    ].join("\n"));
    let reloads = 0;
    let hammerDone = false;
    void hammer.done.finally(() => (hammerDone = true));
    while (!hammerDone && reloads < 40) {
      if (reloads % 2 === 0) writeSkill(roots.wsAgents(dirs.workspace), "extra");
      else await rm(join(dirs.workspace, ".agents", "skills", "extra"), { recursive: true });
      const result = await session.reload();
      namesByRevision.set(result.revision, session.view.snapshot.skills.map((s) => s.name).join(","));
      reloads += 1;
    }
    expect((await hammer.done).status).toBe("ok");
    const seen = JSON.parse(await run(session, "print(json.dumps(seen))")) as [string, string][];
    expect(seen).toHaveLength(600);
    expect(reloads).toBeGreaterThan(1);
    for (const [revision, names] of seen) expect(namesByRevision.get(revision)).toBe(names);
    expect(new Set(seen.map(([revision]) => revision)).size).toBeGreaterThan(1);
  });

  it("serves the new snapshot to the first call after a swap, keeps pid, variables and typed bindings", async () => {
    writeSkill(roots.wsAgents(dirs.workspace), "added-later");
    const result = await session.reload();
    expect(result.added).toContain("added-later");
    const out = await run(session, [
      "r = await skills.list()",
      "print(r['revision'])",
      "print(x_before_reload, os.getpid() == pid_before, commands.demo is demo_method)",
      "print(hasattr(commands, 'added_later'))",
      "print((await commands.invoke('/added-later', 'go'))['name'])",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual([result.revision, "42 True True", "False", "added-later"]);
  });

  it("names a new skill that did not load, with its error, and not again on the next reload", async () => {
    writeSkill(roots.wsAgents(dirs.workspace), "half-written", "---\nname: half-written\n---\nNo description yet.\n");
    const result = await session.reload();
    expect(result.failed).toEqual([{ name: "half-written", message: expect.stringContaining("description") }]);
    expect(reloadText(result, 200)).toMatch(/^reloaded: 1 skill did not load \(half-written: .*description.*; see \/skills\), \d+ skills\n$/);
    const again = await session.reload();
    expect(again.failed).toEqual([]);
    expect(reloadText(again)).toMatch(/^reloaded: no change, \d+ skills\n$/);
    await rm(join(dirs.workspace, ".agents", "skills", "half-written"), { recursive: true });
  });

  it("fails a typed method whose skill disappeared with a clear not_found error", async () => {
    await rm(join(dirs.workspace, ".agents", "skills", "demo"), { recursive: true });
    await session.reload();
    const out = await run(session, "try:\n    await commands.demo('x')\nexcept albedo.NotFound as e:\n    print(e)");
    expect(out).toContain("/demo");
  });

  it("gives the kernel a call deadline no shorter than the reload route's, so a slow reload is not abandoned early", async () => {
    const out = await run(session, "import os\nprint(os.environ['ALBEDO_RPC_DEADLINE_MS'])");
    expect(Number(out.trim())).toBeGreaterThan(RELOAD_ROUTE_TIMEOUT_MS);
  });

  it("reloads from Python through commands.invoke('/reload', 'session')", async () => {
    writeSkill(roots.wsAgents(dirs.workspace), "from-python");
    const out = await run(session, "r = await commands.invoke('/reload', 'session')\nprint(r['added'])");
    expect(out.trim()).toBe("['from-python']");
    expect(session.view.snapshot.skills.map((s) => s.name)).toContain("from-python");
  });
});
