/**
 * albedo as an MCP server (P-1..P-5) on the official SDK's low-level Server (2.x, both eras): the
 * session's kernel as the `python` tool, its enabled skills as the `skill` tool, prompts and
 * `skill://` resources, and `reload`. One server instance serves one era; where its requests find
 * their session is its SessionSource (the connection's one session, or the handles of the
 * 2026-07-28 era). In the 2026-07-28 era a `python` call answers with its session's handle, and,
 * for a client that declares the Tasks extension, with a task when its cell runs long.
 */
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, Server, type CallToolRequest, type CallToolResult, type ServerContext, type Tool } from "@modelcontextprotocol/server";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { BUILTIN_COMMANDS, describeResult, findCommand } from "../commands/index.js";
import { AppError } from "../errors/index.js";
import { installVersion, type Disposable } from "../platform/index.js";
import { findSkill, MAX_READ_LIMIT, type Activation, type SkillEntry } from "../skills/index.js";
import { skillText } from "../turns/index.js";
import type { CellAnswer } from "./cells.js";
import type { ServedSession } from "./host.js";
import { DEFAULT_PYTHON_TIMEOUT_S, MAX_PYTHON_TIMEOUT_S, PYTHON_TASK_AFTER_MS, RESOURCES_PAGE_SIZE } from "./limits.js";
import { HandleProblem, type HandledSession, type SessionSource } from "./sessions.js";
import { attachSkillsOverMcp, type WholeSkillRead } from "./skillsOverMcp.js";
import { TASKS_EXTENSION, UnknownTask, type TaskStore } from "./tasks.js";
import { parseSkillUri, resourceMime, skillUri } from "./uris.js";

/** The name albedo answers `initialize` and `server/discover` with, beside the install's version. */
export const SERVER_NAME = "albedo";

/** The protocol era a server instance serves: 2026-07-28 ("modern") or the `initialize` handshake ("legacy"). */
export type ServedEra = "legacy" | "modern";

/** The `session` argument every tool takes: the handle a first python call returned. */
const sessionArgument = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("the session handle an earlier python call returned; leave it out on the first call, which starts a session and returns its handle");

/** Each tool's input, declared once: tools/list shows its JSON Schema, and a call is parsed with it. */
const pythonArguments = z
  .object({
    code: z.string().min(1, "code is empty").describe("Python to run"),
    timeout_s: z.number().positive().max(MAX_PYTHON_TIMEOUT_S).optional().describe(`seconds before the cell is interrupted (default ${DEFAULT_PYTHON_TIMEOUT_S})`),
    session: sessionArgument,
  })
  .strict();
/**
 * The skill tool's input. Listed, `name` names the session's enabled skills as its enum; a call is
 * checked against the view current when it arrives (enabledSkill), which says which are enabled.
 */
const skillArguments = (skills: readonly SkillEntry[] = []) =>
  z
    .object({
      name: z
        .string()
        .min(1)
        .meta(skills.length === 0 ? {} : { enum: skills.map((skill) => skill.name), description: skills.map((skill) => `${skill.name}: ${skill.description}`).join("\n").slice(0, 8192) }),
      arguments: z.string().optional().describe("what you are about to do with it (optional)"),
      session: sessionArgument,
    })
    .strict();
/** reload takes only the session (other arguments a call sends are refused). */
const reloadArguments = z.object({ session: sessionArgument }).strict();

const INSTRUCTIONS =
  "albedo runs a persistent, sandboxed Python kernel for this workspace. Use the python tool to run code " +
  "(state persists between calls; `skills`, `commands` and, when configured, `mcp` are defined in it), the skill " +
  "tool to load a skill's instructions, and reload after skills changed on disk. Without an MCP session (protocol " +
  "2026-07-28) the first python call returns a session handle: pass it as `session` to later calls.";

export interface ServerParts {
  readonly era: ServedEra;
  readonly sessions: SessionSource;
  /** Where long cells become tasks (2026-07-28 era); without it every call is answered when its cell ends. */
  readonly tasks?: TaskStore;
  /** Who may read and cancel the tasks this server makes (the workspace of an HTTP endpoint, the stdio process). */
  readonly taskOwner?: string;
  /** Whether this instance announces reloads as list changes itself (a connection's server; not a per-request one). */
  readonly announce: boolean;
}

/**
 * The one place a server instance is built, for either era: the tools, prompts and resources, then
 * the extensions. Answers the server and what stops its reload announcements.
 */
export function buildServer(parts: ServerParts): { server: Server; dispose(): void } {
  const server = new Server({ name: SERVER_NAME, version: installVersion() }, {
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true },
      ...(parts.era === "modern" && parts.tasks !== undefined ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    },
    instructions: INSTRUCTIONS,
  });
  const { readSkill } = attachExtensions(server, parts);
  const served = new Served(server, parts, readSkill);
  served.handle();
  const watching: Disposable | undefined = parts.announce ? parts.sessions.onCatalogChange(() => void announceChanges(server)) : undefined;
  return { server, dispose: () => watching?.dispose() };
}

/**
 * Extensions on a built server, before it connects, in either era: each gets the server and the
 * parts it serves from (`parts.sessions.current()` is the session whose catalog lists are read
 * from): the Tasks extension, and Skills over MCP, whose whole-file reads albedo's resources/read
 * gives a plain skill:// address.
 */
function attachExtensions(server: Server, parts: ServerParts): { readSkill: WholeSkillRead } {
  attachTasks(server, parts);
  return { readSkill: attachSkillsOverMcp(server, async () => (await parts.sessions.current()).session) };
}

/** The Tasks extension's `tasks/get` and `tasks/cancel` (2026-07-28 era, where the server offers tasks). */
function attachTasks(server: Server, parts: ServerParts): void {
  const { tasks, taskOwner } = parts;
  if (parts.era !== "modern" || tasks === undefined) return;
  const owner = taskOwner ?? "";
  const params = { params: z.looseObject({ taskId: z.string().min(1).max(200) }) };
  const answer = (read: () => Record<string, unknown>) => {
    try {
      return read();
    } catch (error) {
      if (error instanceof UnknownTask) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
      throw error;
    }
  };
  server.setRequestHandler("tasks/get", params, async ({ taskId }) => answer(() => ({ ...tasks.get(taskId, owner) })));
  server.setRequestHandler("tasks/cancel", params, async ({ taskId }) => answer(() => ({ ...tasks.cancel(taskId, owner) })));
}

async function announceChanges(server: Server): Promise<void> {
  await Promise.all([server.sendToolListChanged(), server.sendPromptListChanged(), server.sendResourceListChanged()]).catch(() => undefined);
}

/** Whether the request declares the Tasks extension among its client capabilities (the per-request envelope). */
function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

/** The handlers of one server instance. */
class Served {
  constructor(private readonly server: Server, private readonly parts: ServerParts, private readonly readSkill: WholeSkillRead) {}

  /** The session lists are served from; in the legacy era a request before `initialize` is refused. */
  private async current(): Promise<ServedSession> {
    return (await this.session()).session;
  }

  private async session(handle?: string): Promise<HandledSession> {
    return handle === undefined ? this.settled(() => this.parts.sessions.current()) : (await this.forCall(handle)).served;
  }

  private forCall(handle: string | undefined): Promise<{ served: HandledSession; opened: boolean }> {
    return this.settled(() => this.parts.sessions.forCall(handle));
  }

  /** `find` once the client may ask (legacy: after `initialize`); a session that did not open is an internal error, an unknown handle a HandleProblem. */
  private async settled<T>(find: () => Promise<T>): Promise<T> {
    if (this.parts.era === "legacy" && this.server.getClientVersion() === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, "send initialize first: albedo answers no other request before it");
    try {
      return await find();
    } catch (error) {
      if (error instanceof HandleProblem) throw error;
      throw new ProtocolError(ProtocolErrorCode.InternalError, `the albedo session did not open: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  handle(): void {
    this.server.setRequestHandler("tools/list", async () => ({ tools: toolsOf(await this.current()) }));
    this.server.setRequestHandler("tools/call", async (request, ctx) => {
      try {
        return await this.callTool(request, ctx);
      } catch (error) {
        // A call the model got wrong (arguments, a skill name, a handle) or one the session refused: a result it can read and act on.
        if (error instanceof ToolCallProblem || error instanceof AppError || error instanceof HandleProblem) return { content: [{ type: "text", text: error.message }], isError: true };
        throw error;
      }
    });

    this.server.setRequestHandler("prompts/list", async () => ({
      prompts: promptSkills(await this.current()).map((entry) => ({
        name: entry.name,
        description: entry.description,
        arguments: [{ name: "arguments", description: "what to do with the skill (optional)", required: false }],
      })),
    }));
    this.server.setRequestHandler("prompts/get", async (request) => {
      const session = await this.current();
      const entry = promptSkills(session).find((skill) => skill.name === request.params.name);
      if (entry === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no prompt named "${request.params.name}"; prompts are the skills a person can invoke: ${promptSkills(session).map((s) => s.name).join(", ") || "none"}`);
      const activation = await session.skills.activate(entry.name, request.params.arguments?.arguments ?? "");
      const command = session.view.commands.commands.find((c) => c.skill === entry.name)?.name ?? `/${entry.name}`;
      return { description: entry.description, messages: [{ role: "user" as const, content: { type: "text" as const, text: promptText(command, activation) } }] };
    });
    this.handleResources();
  }

  /** One tools/call: throws ToolCallProblem, HandleProblem (or AppError) for a call to answer with an isError result, ProtocolError for an unknown tool. */
  private async callTool(request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult> {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "python":
        return this.python(parsed(pythonArguments, args, "python"), request, ctx);
      case "skill": {
        const { name, arguments: text, session: handle } = parsed(skillArguments(), args, "skill");
        const { session } = await this.session(handle);
        const entry = findSkill(session.view.snapshot, name);
        if (entry === undefined) throw new ToolCallProblem(noSkill(session, name));
        const activation = await session.skills.activate(entry.name, text ?? "");
        return { content: [{ type: "text", text: skillText(entry, activation, await session.skills.resources(entry.name)) }] };
      }
      case "reload": {
        const { session: handle } = parsed(reloadArguments, args, "reload");
        const { session } = await this.session(handle);
        const result = await session.reload();
        return { content: [{ type: "text", text: describeResult(findCommand({ revision: "", commands: BUILTIN_COMMANDS }, "/reload"), result).trimEnd() }] };
      }
      default:
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no tool named "${request.params.name}"; albedo's tools are ${toolsOf(await this.current()).map((tool) => tool.name).join(", ")}`);
    }
  }

  /**
   * A python call: its cell in the session the handle names (or the one a first call opens). In
   * the 2026-07-28 era the answer carries the handle; for a client that declares the Tasks
   * extension, a cell still running after PYTHON_TASK_AFTER_MS is answered with a task.
   */
  private async python({ code, timeout_s, session: handle }: z.infer<typeof pythonArguments>, request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult> {
    const { served, opened } = await this.forCall(handle);
    const { tasks } = this.parts;
    const asTask = this.parts.era === "modern" && tasks !== undefined && declaresTasks(ctx) && tasks.hasRoom();
    // A plain call's cell stops with its request; a task's cell outlives the request and stops with tasks/cancel.
    const stop = new AbortController();
    const requestGone = () => stop.abort(ctx.mcpReq.signal.reason);
    ctx.mcpReq.signal.addEventListener("abort", requestGone, { once: true });
    let reporting = true;
    const token = request.params._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (seconds: number) =>
            void (reporting && ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: seconds, message: `the cell has run ${seconds} s` } }).catch(() => undefined));
    const done = served.busy();
    const work = served.cells
      .run({ code, timeoutS: timeout_s ?? DEFAULT_PYTHON_TIMEOUT_S, signal: stop.signal, ...(onProgress ? { onProgress } : {}) })
      .then((answer) => this.answer(cellResult(answer), served.handle, opened), (error: unknown) => {
        if (error instanceof AppError) return this.answer({ content: [{ type: "text", text: error.message }], isError: true }, served.handle, opened);
        throw error;
      })
      .finally(done);
    if (!asTask) {
      try {
        return await work;
      } finally {
        ctx.mcpReq.signal.removeEventListener("abort", requestGone);
      }
    }
    const waited = new AbortController();
    const first = await Promise.race([work, sleep(PYTHON_TASK_AFTER_MS, undefined, { signal: waited.signal }).catch(() => undefined)]).finally(() => {
      waited.abort();
      ctx.mcpReq.signal.removeEventListener("abort", requestGone);
    });
    if (first !== undefined) return first;
    reporting = false;
    const task = tasks!.start(work as Promise<Record<string, unknown>>, stop, this.parts.taskOwner ?? "", `the cell is running in session ${served.handle}`);
    // The Tasks extension's answer to tools/call: the SDK passes a handler's resultType through on this method.
    return { resultType: "task", ...task } as unknown as CallToolResult;
  }

  /** A cell's result as this era answers it: in the 2026-07-28 era with the session's handle (text and structuredContent). */
  private answer(result: CallToolResult, handle: string, opened: boolean): CallToolResult {
    if (this.parts.era === "legacy") return result;
    const said = opened
      ? `session: ${handle} (a new kernel session: pass "session": "${handle}" to later calls to keep its state)`
      : `session: ${handle}`;
    return { ...result, content: [...result.content, { type: "text", text: said }], structuredContent: { session: handle, isError: result.isError === true } };
  }

  private handleResources(): void {
    this.server.setRequestHandler("resources/list", async (request) => {
      const session = await this.current();
      const start = cursorOf(request.params?.cursor);
      const all: { uri: string; name: string; mimeType: string }[] = [];
      for (const entry of session.view.snapshot.skills) {
        if (all.length >= start + RESOURCES_PAGE_SIZE + 1) break;
        const listing = await session.skills.resources(entry.name);
        for (const path of listing.resources) all.push({ uri: skillUri(entry.name, path), name: `${entry.name}/${path}`, mimeType: resourceMime(path) });
      }
      const page = all.slice(start, start + RESOURCES_PAGE_SIZE);
      return { resources: page, ...(all.length > start + RESOURCES_PAGE_SIZE ? { nextCursor: String(start + RESOURCES_PAGE_SIZE) } : {}) };
    });
    this.server.setRequestHandler("resources/templates/list", async () => {
      await this.current();
      return { resourceTemplates: [{ uriTemplate: "skill://{name}/{path}", name: "skill file", description: "A file of an enabled skill; add ?offset=N for the page from byte N" }] };
    });
    this.server.setRequestHandler("resources/read", async (request) => {
      const session = await this.current();
      const wanted = parseSkillUri(request.params.uri);
      if (typeof wanted === "string") throw new ProtocolError(ProtocolErrorCode.InvalidParams, wanted);
      const entry = enabledSkill(session, wanted.skill);
      try {
        // A plain address of a file within one page: the file whole, as Skills over MCP published
        // it (checked against its digest). A larger one, or a page address, answers one page.
        const whole = request.params.uri.includes("?") ? undefined : await this.readSkill(request.params.uri, MAX_READ_LIMIT);
        if (whole !== undefined) {
          const mimeType = whole.mimeType ?? resourceMime(wanted.path);
          return { contents: ["text" in whole ? { uri: request.params.uri, mimeType, text: whole.text } : { uri: request.params.uri, mimeType, blob: Buffer.from(whole.bytes).toString("base64") }] };
        }
        const page = await session.skills.read(entry.name, wanted.path, wanted.offset, MAX_READ_LIMIT);
        const more = page.next_offset === null ? {} : { _meta: { "albedo/next": skillUri(entry.name, wanted.path, page.next_offset), "albedo/size": page.size } };
        const content = page.encoding === "base64" ? { uri: request.params.uri, mimeType: resourceMime(wanted.path), blob: page.content } : { uri: request.params.uri, mimeType: resourceMime(wanted.path), text: page.content };
        return { contents: [content], ...more };
      } catch (error) {
        if (error instanceof AppError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${error.code}: ${error.message}`);
        throw error;
      }
    });
  }
}

/** albedo's tools for the session's current view (P-2): `skill` only while a skill is enabled. */
function toolsOf(session: ServedSession): Tool[] {
  const sandboxed = session.status().sandbox === "bwrap";
  const where = sandboxed
    ? "The kernel runs in a sandbox: it sees this workspace and nothing private of the host (no home directory, no credentials), and it has no network unless albedo's network setting allows it."
    : "The kernel runs without a sandbox, with the rights of the user who started albedo.";
  const tools: Tool[] = [
    {
      name: "python",
      title: "Run Python",
      description:
        `Run Python in this workspace's IPython kernel (${session.workspace}). State persists between calls; top-level await works. ${where} ` +
        "`skills` (list, load and read the workspace's skills), `commands` (the slash commands) and, when MCP servers are configured, `mcp` are defined. " +
        "Returns what the cell printed (stdout and stderr in order), the value of its last expression, the traceback if it failed, and its images (plots) as image content. " +
        `A cell runs at most timeout_s seconds (default ${DEFAULT_PYTHON_TIMEOUT_S}); cancelling the call interrupts it. ` +
        "Without an MCP session (protocol 2026-07-28) the answer names the kernel's session handle: pass it as `session` to later calls to keep their state.",
      inputSchema: inputSchema(pythonArguments),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: !sandboxed },
    },
  ];
  const { skills } = session.view.snapshot;
  if (skills.length > 0) {
    tools.push({
      name: "skill",
      title: "Load a skill",
      description: "Load one of this workspace's skills: returns its instructions and the files it bundles. Load the skill whose description fits the task before doing it.",
      inputSchema: inputSchema(skillArguments(skills)),
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
  }
  tools.push({
    name: "reload",
    title: "Reload skills",
    description: "Re-read the workspace's skills and settings (/reload session) without restarting the kernel: its state stays. Answers what changed.",
    inputSchema: inputSchema(reloadArguments),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  return tools;
}

/** A tool's input as tools/list shows it: its declaration's JSON Schema, without the dialect marker. */
function inputSchema(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema) as Tool["inputSchema"];
  return rest;
}

/** The skills a person may invoke as commands: the prompts (P-3). */
function promptSkills(session: ServedSession): SkillEntry[] {
  const invocable = new Set(session.view.commands.commands.flatMap((command) => (command.skill === undefined ? [] : [command.skill])));
  return session.view.snapshot.skills.filter((skill) => invocable.has(skill.name));
}

/** A tool call the caller got wrong: answered as an isError result, which a model reads and can act on, not a JSON-RPC error. */
class ToolCallProblem extends Error {}

function noSkill(session: ServedSession, name: string): string {
  return `no enabled skill named "${name}"; enabled: ${session.view.snapshot.skills.map((s) => s.name).join(", ") || "none"}`;
}

/** A resource's skill; an unknown one is invalid params (resources/read has no isError result). */
function enabledSkill(session: ServedSession, name: string): SkillEntry {
  const entry = findSkill(session.view.snapshot, name);
  if (entry === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, noSkill(session, name));
  return entry;
}

/** Arguments checked against `schema`; a mismatch throws ToolCallProblem naming the field. */
function parsed<T>(schema: z.ZodType<T>, args: unknown, tool: string): T {
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length > 0 ? issue.path.join(".") : "arguments";
  throw new ToolCallProblem(`${tool}: ${path}: ${issue.message}`);
}

/**
 * The user message of a skill's prompt (P-3): what the person asked, the skill it comes from, and
 * its instructions as written, readable as they are (the model gets the same text a person would).
 */
function promptText(command: string, activation: Activation): string {
  const asked = typeof activation.arguments === "string" ? activation.arguments.trim() : Object.entries(activation.arguments).map(([k, v]) => `${k}=${v}`).join(", ");
  const head = `${command}${asked === "" ? "" : ` ${asked}`}`;
  return `${head}\n\nFollow the instructions of the skill "${activation.name}" (${activation.source})${asked === "" ? "" : ` for: ${asked}`}.\n\n${activation.instructions.trimEnd()}\n`;
}

function cursorOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const start = Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `cursor "${cursor.slice(0, 40)}" is not one albedo handed out`);
  return start;
}

/** A cell's answer as a tool result: its text, then its images; an error, interrupt or timeout is isError. */
function cellResult(answer: CellAnswer): CallToolResult {
  return {
    content: [
      { type: "text", text: answer.text },
      ...answer.images.map((image) => ({ type: "image" as const, data: image.bytes.toString("base64"), mimeType: image.mime })),
    ],
    isError: answer.end !== "ok",
  };
}
