import { describe, expect, it } from "vitest";
import {
  BUILTIN_COMMANDS,
  buildCommandCatalog,
  completeCommand,
  declarationOf,
  findCommand,
  MAX_ARGUMENT_TEXT_BYTES,
  parseSlashLine,
  resolveArguments,
  resolveCall,
  skillCommandName,
  splitArguments,
  type Command,
  type CommandCatalog,
  type CommandContext,
  type CommandDeclaration,
} from "../../src/commands/index.js";
import { isAppError } from "../../src/errors/index.js";
import type { CatalogSnapshot, SkillEntry } from "../../src/skills/types.js";

function entry(name: string): SkillEntry {
  return {
    name,
    description: `the ${name} skill`,
    source: `/ws/.agents/skills/${name}/SKILL.md`,
    scope: "workspace",
    dir: `/ws/.agents/skills/${name}`,
    resolvedDir: `/ws/.agents/skills/${name}`,
    resolvedSource: `/ws/.agents/skills/${name}/SKILL.md`,
    dirIdentity: { dev: "1", ino: "2" },
    sourceIdentity: { dev: "1", ino: "3" },
    size: 10,
    optional: {},
  };
}

function snapshot(names: string[]): CatalogSnapshot {
  return { revision: "r1", workspace: "/ws", home: "/home", skills: names.map(entry), diagnostics: [], instructions: [] };
}

const twoArgs: CommandDeclaration = {
  name: "/pair",
  description: "two arguments",
  arguments: [
    { name: "first", help: "one token", required: true },
    { name: "rest", help: "the rest", required: false },
  ],
  callers: ["user", "model"],
  submitsTurn: false,
};

describe("C-1 one declaration per command", () => {
  it("declares every built-in with name, description, arguments, callers and submitsTurn", () => {
    for (const command of BUILTIN_COMMANDS) {
      expect(command.name).toMatch(/^\/[a-z]+$/);
      expect(command.description.length).toBeGreaterThan(10);
      expect(Array.isArray(command.arguments)).toBe(true);
      expect(command.callers.length).toBeGreaterThan(0);
      expect(typeof command.submitsTurn).toBe("boolean");
    }
  });

  it("declares a skill command from its catalog entry: model- and user-callable, a user call submits a turn", () => {
    const catalog = buildCommandCatalog(snapshot(["demo"]));
    const demo = findCommand(catalog, "/demo");
    expect(demo).toMatchObject({ name: "/demo", description: "the demo skill", skill: "demo", submitsTurn: true });
    expect(demo?.callers).toEqual(["user", "model"]);
    expect(catalog.revision).toBe("r1");
  });

  it("leaves skill commands out when the skills extension is off", () => {
    const catalog = buildCommandCatalog(snapshot(["demo"]), { skills: false });
    expect(findCommand(catalog, "/demo")).toBeUndefined();
    expect(catalog.commands).toHaveLength(BUILTIN_COMMANDS.length);
  });

  it("completes partly typed commands from the same catalog", () => {
    const catalog = buildCommandCatalog(snapshot(["reload-notes", "research"]));
    expect(completeCommand(catalog, "/re")).toEqual(["/reload", "/reload-notes", "/research"]);
  });
});

describe("C-2 names", () => {
  it("includes the required built-ins", () => {
    const names = BUILTIN_COMMANDS.map((command) => command.name);
    expect(names).toEqual(expect.arrayContaining(["/help", "/reload", "/model", "/skills", "/status"]));
  });

  it("gives a skill /<name>, and /skill:<name> when it collides with a built-in", () => {
    expect(skillCommandName("pdf-processing")).toBe("/pdf-processing");
    for (const builtin of ["help", "reload", "model", "skills", "status"]) {
      expect(skillCommandName(builtin)).toBe(`/skill:${builtin}`);
    }
  });

  it("keeps the built-in when a skill has its name", () => {
    const catalog = buildCommandCatalog(snapshot(["model"]));
    expect(findCommand(catalog, "/model")?.skill).toBeUndefined();
    expect(findCommand(catalog, "/skill:model")?.skill).toBe("model");
  });
});

describe("C-3 argument splitting", () => {
  it("gives each leading argument one token and the last the trimmed rest", () => {
    expect(splitArguments(twoArgs.arguments, "  a.pdf   merge  these   files  ")).toEqual({ first: "a.pdf", rest: "merge  these   files" });
  });

  it("keeps inner newlines and tabs in the last argument", () => {
    expect(splitArguments(twoArgs.arguments, "x line one\n\tline two\n")).toEqual({ first: "x", rest: "line one\n\tline two" });
  });

  it("leaves absent arguments out", () => {
    expect(splitArguments(twoArgs.arguments, "   ")).toEqual({});
    expect(splitArguments(twoArgs.arguments, "only")).toEqual({ first: "only" });
  });

  it("gives a single argument all of the trimmed text", () => {
    const [skillArg] = buildCommandCatalog(snapshot(["demo"])).commands.at(-1)!.arguments;
    expect(splitArguments([skillArg!], "  merge these   files ")).toEqual({ arguments: "merge these   files" });
  });

  it("accepts an object of strings and checks it against the declaration", () => {
    expect(resolveArguments(twoArgs, { first: "a", rest: "b c" })).toEqual({ first: "a", rest: "b c" });
    expect(() => resolveArguments(twoArgs, { first: "a", other: "x" })).toThrow(/no argument "other"/);
    expect(() => resolveArguments(twoArgs, { first: 3 })).toThrow(/must be a string/);
  });

  it("refuses a missing required argument with invalid_params and the usage", () => {
    try {
      resolveArguments(twoArgs, "");
      expect.unreachable();
    } catch (error) {
      expect(isAppError(error, "invalid_params")).toBe(true);
      expect((error as Error).message).toContain("/pair <first> [rest]");
    }
  });

  it("refuses text for a command that takes no arguments", () => {
    const status = BUILTIN_COMMANDS.find((command) => command.name === "/status")!;
    expect(() => resolveArguments(status, "now")).toThrow(/takes no arguments/);
    expect(resolveArguments(status, "  ")).toEqual({});
  });

  it("refuses argument text over MAX_ARGUMENT_TEXT_BYTES, naming the limit", () => {
    const big = "x".repeat(MAX_ARGUMENT_TEXT_BYTES + 1);
    expect(() => resolveArguments(twoArgs, `a ${big}`)).toThrow(/MAX_ARGUMENT_TEXT_BYTES = 65536/);
    expect(() => resolveArguments(twoArgs, { first: "a", rest: big })).toThrow(/MAX_ARGUMENT_TEXT_BYTES/);
  });

  it("parses a typed slash line into name and raw text", () => {
    expect(parseSlashLine("/reload session")).toEqual({ name: "/reload", text: "session" });
    expect(parseSlashLine("  /demo  merge\n these ")).toEqual({ name: "/demo", text: "merge\n these " });
    expect(parseSlashLine("/status")).toEqual({ name: "/status", text: "" });
    expect(parseSlashLine("print(1)")).toBeUndefined();
  });
});

/** A context that records what commands asked of their session. */
function contextFor(catalog: CommandCatalog, skills: CatalogSnapshot, asked: string[]): CommandContext {
  return {
    commands: catalog,
    skills,
    reload: async () => (asked.push("reload"), { reloaded: true }),
    status: () => (asked.push("status"), { kernel: "idle" }),
    modelInfo: () => (asked.push("modelInfo"), { adapter: "none" }),
    activate: async (skill, text) => (asked.push(`activate ${skill} ${text}`), { name: skill, description: "", source: "", arguments: text, instructions: "body" }),
  };
}

async function call(catalog: CommandCatalog, context: CommandContext, name: string, input: unknown, caller: "user" | "model" = "user"): Promise<unknown> {
  const resolved = resolveCall(catalog, name, input, caller);
  if (resolved === undefined) throw new Error(`no ${name}`);
  return resolved.command.run(context, resolved.args);
}

describe("C-1 a command is one object: declaration and behaviour", () => {
  it("gives every built-in its own run, and puts only the declaration on the wire", () => {
    for (const command of BUILTIN_COMMANDS) {
      expect(typeof command.run).toBe("function");
      const wire = JSON.parse(JSON.stringify(declarationOf(command)));
      expect(wire).toEqual({ name: command.name, description: command.description, arguments: command.arguments, callers: command.callers, submitsTurn: command.submitsTurn });
    }
    const skill = buildCommandCatalog(snapshot(["demo"])).commands.at(-1)!;
    expect(declarationOf(skill)).toMatchObject({ name: "/demo", skill: "demo" });
    expect(Object.keys(declarationOf(skill))).not.toContain("run");
  });

  it("runs a command that is not built in through the same resolver: no list of names to extend", async () => {
    const echo: Command = { ...twoArgs, name: "/echo", run: async (_context, args) => ({ echoed: args }) };
    const catalog: CommandCatalog = { revision: "r", commands: [echo] };
    const context = contextFor(catalog, snapshot([]), []);
    expect(await call(catalog, context, "/echo", " a  b c ")).toEqual({ echoed: { first: "a", rest: "b c" } });
  });

  it("runs the built-ins against the context they are given", async () => {
    const skills = snapshot(["help", "demo"]);
    const catalog = buildCommandCatalog(skills);
    const asked: string[] = [];
    const context = contextFor(catalog, skills, asked);
    expect(await call(catalog, context, "/reload", "")).toEqual({ reloaded: true });
    await expect(call(catalog, context, "/reload", "kernel")).rejects.toThrow(/knows the target "session"/);
    expect(await call(catalog, context, "/status", "")).toEqual({ kernel: "idle" });
    expect(await call(catalog, context, "/model", "")).toEqual({ adapter: "none" });
    expect(await call(catalog, context, "/help", "/reload")).toMatchObject({ usage: "/reload [target]" });
    expect(((await call(catalog, context, "/help", "")) as { commands: unknown[] }).commands).toHaveLength(catalog.commands.length);
    await expect(call(catalog, context, "/help", "/nope")).rejects.toThrow(/no command \/nope/);
    const listed = (await call(catalog, context, "/skills", "")) as { skills: { name: string; command: string }[] };
    expect(listed.skills.map((s) => [s.name, s.command])).toEqual([["help", "/skill:help"], ["demo", "/demo"]]);
    expect(asked).toEqual(["reload", "status", "modelInfo"]);
  });

  it("activates a skill command through the context with the trimmed argument text", async () => {
    const skills = snapshot(["demo"]);
    const catalog = buildCommandCatalog(skills);
    const asked: string[] = [];
    expect(await call(catalog, contextFor(catalog, skills, asked), "/demo", "  merge  these ", "model")).toMatchObject({ name: "demo", arguments: "merge  these" });
    expect(asked).toEqual(["activate demo merge  these"]);
  });
});

describe("C-1 C-3 one resolver for every face", () => {
  const catalog = buildCommandCatalog(snapshot(["demo"]));

  it("answers an unknown name with undefined, not an error", () => {
    expect(resolveCall(catalog, "/nope", "", "user")).toBeUndefined();
  });

  it("checks the caller before the arguments: /model is the user's alone", () => {
    expect(() => resolveCall(catalog, "/model", "extra", "model")).toThrow(/can be called by user, not by the model/);
    try {
      resolveCall(catalog, "/model", "", "model");
      expect.unreachable();
    } catch (error) {
      expect(isAppError(error, "forbidden")).toBe(true);
    }
    expect(resolveCall(catalog, "/model", "", "user")?.command.name).toBe("/model");
  });

  it("splits text and checks objects the same way for every caller, slash optional", () => {
    expect(resolveCall(catalog, "demo", "  a  b ", "model")?.args).toEqual({ arguments: "a  b" });
    expect(resolveCall(catalog, "/demo", { arguments: "x" }, "user")?.args).toEqual({ arguments: "x" });
    expect(() => resolveCall(catalog, "/status", "now", "user")).toThrow(/takes no arguments/);
  });
});
