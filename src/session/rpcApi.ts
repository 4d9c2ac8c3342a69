/**
 * Every method a session serves its kernel (K-5), declared once: the dispatcher checks each call's
 * params against its schema, the handlers in rpcMethods.ts are bound to these declarations, and the
 * kernel package's copy (names, parameters, defaults, docstrings) is generated from them
 * (pythonContract.ts). `commands.slash` and `commands.complete` serve a person typing `/name args`
 * in a notebook: the runtime parses, runs and renders the line, so the kernel keeps no copy of that.
 */
import { z } from "zod";
import type { CommandDeclaration } from "../commands/index.js";
import { answers, type RpcMethod } from "../rpc/index.js";
import { DEFAULT_READ_LIMIT, SKILL_FILE, type ReadResult, type ResourceListing } from "../skills/index.js";

/** Reload can walk up to MAX_CANDIDATES skill trees; it gets longer than an ordinary call. */
export const RELOAD_ROUTE_TIMEOUT_MS = 60_000;

const SkillName = z.string().min(1, "must be a non-empty skill name");
const Offset = z.number().int().min(0);
const SlashLine = z.string().min(1, "must be a non-empty line");

/** One catalog entry as `skills.list` answers it. */
export interface SkillListing {
  readonly name: string;
  readonly description: string;
  readonly source: string;
  readonly command: string;
}

/** What `commands.slash` answers: the command the line ran, its value and the text a person reads. */
export interface SlashAnswer {
  readonly command: string;
  readonly submits_turn: boolean;
  readonly value: unknown;
  readonly text: string;
}

export const SKILL_METHODS = {
  list: {
    name: "skills.list",
    summary: "The catalog entries of the session's snapshot: name, description, source and slash command of each skill.",
    params: z.object({}).strict(),
    result: answers<{ readonly revision: string; readonly skills: readonly SkillListing[] }>(),
  },
  read: {
    name: "skills.read",
    summary: "One byte range of a skill's resource: {content, encoding, size, offset, next_offset, truncated}.",
    params: z.object({ name: SkillName, resource: z.string().default(SKILL_FILE), offset: Offset.default(0), limit: Offset.default(DEFAULT_READ_LIMIT) }).strict(),
    result: answers<ReadResult>(),
  },
  resources: {
    name: "skills.resources",
    summary: "The relative paths of a skill's resources, with the diagnostics of the walk.",
    params: z.object({ name: SkillName }).strict(),
    result: answers<ResourceListing>(),
  },
} as const satisfies Record<string, RpcMethod>;

export const COMMAND_METHODS = {
  catalog: {
    name: "commands.catalog",
    summary: "Every command of the current snapshot with its argument details.",
    params: z.object({}).strict(),
    result: answers<{ readonly revision: string; readonly commands: readonly CommandDeclaration[] }>(),
  },
  invoke: {
    name: "commands.invoke",
    summary: "Runs a command by slash name with raw argument text or a dict of named arguments; a skill's activation comes back as an Activation (a dict).",
    params: z.object({ name: z.string().min(1, "must be a non-empty command name"), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default("") }).strict(),
    timeoutMs: RELOAD_ROUTE_TIMEOUT_MS,
    result: answers<unknown>(),
  },
  slash: {
    name: "commands.slash",
    summary: "Runs one slash line as a person typed it and answers with the text to show.",
    params: z.object({ line: SlashLine }).strict(),
    timeoutMs: RELOAD_ROUTE_TIMEOUT_MS,
    result: answers<SlashAnswer>(),
  },
  complete: {
    name: "commands.complete",
    summary: "The completions of a partly typed slash line.",
    params: z.object({ line: SlashLine }).strict(),
    result: answers<{ readonly matches: readonly string[] }>(),
  },
} as const satisfies Record<string, RpcMethod>;

/** Every declared method, for the generated kernel contract and the docs; the handlers live in rpcMethods.ts. */
export const SESSION_METHODS: readonly RpcMethod[] = [...Object.values(SKILL_METHODS), ...Object.values(COMMAND_METHODS)];
