import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/index.js";
import { renderSkillsPrompt } from "../../src/skills/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "./fixtures.js";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { skillCommandName } from "../../src/commands/index.js";
import { roots, writeSkill } from "../support/skills.js";

let dirs: SessionDirs;
let session: Session;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
  await writeFile(join(dirs.workspace, "AGENTS.md"), "Always answer in French.\n");
  session = await openSession(dirs, { extensions: { skills: false } });
});

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

describe("K-8 disabling the skills extension", () => {
  it("removes the catalog, instructions and slash commands from the view", () => {
    expect(session.view.snapshot.skills).toEqual([]);
    expect(session.view.snapshot.instructions).toEqual([]);
    expect(renderSkillsPrompt(session.view.snapshot, skillCommandName)).toBe("");
    expect(session.view.commands.commands.some((command) => command.skill !== undefined)).toBe(false);
    expect(session.methods().sort()).toEqual(["commands.catalog", "commands.complete", "commands.invoke", "commands.slash"]);
  });

  it("removes the Python module and the skills routes, and leaves python and the built-ins alone", async () => {
    const out = await run(session, [
      "print('skills' in dir())",
      "try:\n    from albedo import skills\nexcept ImportError as e:\n    print('ImportError', 'off' in str(e))",
      "c = await commands.catalog()",
      "print([x['name'] for x in c['commands'] if x.get('skill')])",
      "print(hasattr(commands, 'demo'))",
      "import albedo",
      "try:\n    await commands.invoke('/demo', 'x')\nexcept albedo.NotFound as e:\n    print('NotFound')",
      "print(2 + 2)",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["False", "ImportError True", "[]", "False", "NotFound", "4"]);
  });

  it("keeps the skills routes out after a reload", async () => {
    await session.reload();
    expect(session.view.snapshot.skills).toEqual([]);
    expect(await run(session, "c = await commands.catalog()\nprint(len([x for x in c['commands'] if x.get('skill')]))")).toBe("0\n");
  });
});
