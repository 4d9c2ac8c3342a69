/**
 * albedo as an MCP server (P-1..P-4) on the official SDK's low-level Server: the session's kernel
 * as the `python` tool, its enabled skills as the `skill` tool, prompts and `skill://` resources,
 * and `reload`. One server is one session; the session may be opened after `initialize` (its
 * workspace can come from the client's roots), so every handler waits for it.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  type CallToolResult, type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { BUILTIN_COMMANDS, describeResult, findCommand } from "../commands/index.js";
import { AppError } from "../errors/index.js";
import { installVersion, type Disposable } from "../platform/index.js";
import { activationBlock, findSkill, MAX_READ_LIMIT, type SkillEntry } from "../skills/index.js";
import { skillText } from "../turns/index.js";
import { CellQueue, type CellAnswer } from "./cells.js";
import type { ServedSession } from "./host.js";
import { DEFAULT_PYTHON_TIMEOUT_S, MAX_PYTHON_TIMEOUT_S, RESOURCES_PAGE_SIZE } from "./limits.js";
import { parseSkillUri, resourceMime, skillUri } from "./uris.js";

/** The name albedo answers `initialize` with, beside the install's version. */
export const SERVER_NAME = "albedo";

/** Each tool's input, declared once: tools/list shows its JSON Schema, and a call is parsed with it. */
const pythonArguments = z
  .object({
    code: z.string().min(1, "code is empty").describe("Python to run"),
    timeout_s: z.number().positive().max(MAX_PYTHON_TIMEOUT_S).optional().describe(`seconds before the cell is interrupted (default ${DEFAULT_PYTHON_TIMEOUT_S})`),
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
    })
    .strict();
/** reload takes nothing (arguments a call sends anyway are not looked at). */
const reloadArguments = z.object({}).strict();

export class AlbedoMcpServer {
  readonly server: Server;
  private cells: CellQueue | undefined;
  private readonly ready: Promise<ServedSession>;
  private settle!: { resolve(session: ServedSession): void; reject(error: unknown): void };
  private watching: Disposable | undefined;

  constructor() {
    this.server = new Server({ name: SERVER_NAME, version: installVersion() }, {
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
      instructions:
        "albedo runs a persistent, sandboxed Python kernel for this workspace. Use the python tool to run code " +
        "(state persists between calls; `skills`, `commands` and, when configured, `mcp` are defined in it), the skill " +
        "tool to load a skill's instructions, and reload after skills changed on disk.",
    });
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // A client that never asks for anything must not see an unhandled rejection when the session fails.
    this.ready.catch(() => undefined);
    this.handle();
  }

  /** Gives the server its session; until then every request waits. Reloads are announced as list changes. */
  attach(session: ServedSession): void {
    this.cells = new CellQueue(session);
    this.watching = session.onViewChange(() => void this.announceChanges());
    this.settle.resolve(session);
  }

  /** The session could not open: every request answers with `error`. */
  fail(error: unknown): void {
    this.settle.reject(error);
  }

  /** Stops announcing reloads (the session is closed by its owner). */
  dispose(): void {
    this.watching?.dispose();
  }

  private async announceChanges(): Promise<void> {
    await Promise.all([this.server.sendToolListChanged(), this.server.sendPromptListChanged(), this.server.sendResourceListChanged()]).catch(() => undefined);
  }

  /** The session, once the client has initialized; a request before `initialize` is refused. */
  private async served(): Promise<ServedSession> {
    if (this.server.getClientVersion() === undefined) throw new McpError(ErrorCode.InvalidRequest, "send initialize first: albedo answers no other request before it");
    try {
      return await this.ready;
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `the albedo session did not open: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private handle(): void {
    this.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolsOf(await this.served()) }));
    this.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const session = await this.served();
      const args = request.params.arguments ?? {};
      switch (request.params.name) {
        case "python": {
          const { code, timeout_s } = parsed(pythonArguments, args, "python");
          const token = request.params._meta?.progressToken;
          const onProgress =
            token === undefined
              ? undefined
              : (seconds: number) =>
                  void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: seconds, message: `the cell has run ${seconds} s` } }).catch(() => undefined);
          try {
            return cellResult(await this.cells!.run({ code, timeoutS: timeout_s ?? DEFAULT_PYTHON_TIMEOUT_S, signal: extra.signal, ...(onProgress ? { onProgress } : {}) }));
          } catch (error) {
            if (error instanceof AppError) return { content: [{ type: "text", text: error.message }], isError: true };
            throw error;
          }
        }
        case "skill": {
          const { name, arguments: text } = parsed(skillArguments(), args, "skill");
          const entry = enabledSkill(session, name);
          const activation = await session.activate(entry.name, text ?? "");
          return { content: [{ type: "text", text: skillText(entry, activation, await session.resources(entry.name)) }] };
        }
        case "reload": {
          const result = await session.reload();
          return { content: [{ type: "text", text: describeResult(findCommand({ revision: "", commands: BUILTIN_COMMANDS }, "/reload"), result).trimEnd() }] };
        }
        default:
          throw new McpError(ErrorCode.InvalidParams, `no tool named "${request.params.name}"; albedo's tools are ${toolsOf(session).map((tool) => tool.name).join(", ")}`);
      }
    });

    this.server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: promptSkills(await this.served()).map((entry) => ({
        name: entry.name,
        description: entry.description,
        arguments: [{ name: "arguments", description: "what to do with the skill (optional)", required: false }],
      })),
    }));
    this.server.setRequestHandler(GetPromptRequestSchema, async (request) => {
      const session = await this.served();
      const entry = promptSkills(session).find((skill) => skill.name === request.params.name);
      if (entry === undefined) throw new McpError(ErrorCode.InvalidParams, `no prompt named "${request.params.name}"; prompts are the skills a person can invoke: ${promptSkills(session).map((s) => s.name).join(", ") || "none"}`);
      const activation = await session.activate(entry.name, request.params.arguments?.arguments ?? "");
      const command = session.view.commands.commands.find((c) => c.skill === entry.name)?.name ?? `/${entry.name}`;
      return { description: entry.description, messages: [{ role: "user", content: { type: "text", text: activationBlock({ command, activation }) } }] };
    });

    this.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
      const session = await this.served();
      const start = cursorOf(request.params?.cursor);
      const all: { uri: string; name: string; mimeType: string }[] = [];
      for (const entry of session.view.snapshot.skills) {
        if (all.length >= start + RESOURCES_PAGE_SIZE + 1) break;
        const listing = await session.resources(entry.name);
        for (const path of listing.resources) all.push({ uri: skillUri(entry.name, path), name: `${entry.name}/${path}`, mimeType: resourceMime(path) });
      }
      const page = all.slice(start, start + RESOURCES_PAGE_SIZE);
      return { resources: page, ...(all.length > start + RESOURCES_PAGE_SIZE ? { nextCursor: String(start + RESOURCES_PAGE_SIZE) } : {}) };
    });
    this.server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
      await this.served();
      return { resourceTemplates: [{ uriTemplate: "skill://{name}/{path}", name: "skill file", description: "A file of an enabled skill; add ?offset=N for the page from byte N" }] };
    });
    this.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const session = await this.served();
      const wanted = parseSkillUri(request.params.uri);
      if (typeof wanted === "string") throw new McpError(ErrorCode.InvalidParams, wanted);
      const entry = enabledSkill(session, wanted.skill);
      try {
        const page = await session.readResource(entry.name, wanted.path, wanted.offset, MAX_READ_LIMIT);
        const more = page.next_offset === null ? {} : { _meta: { "albedo/next": skillUri(entry.name, wanted.path, page.next_offset), "albedo/size": page.size } };
        const content = page.encoding === "base64" ? { uri: request.params.uri, mimeType: resourceMime(wanted.path), blob: page.content } : { uri: request.params.uri, mimeType: resourceMime(wanted.path), text: page.content };
        return { contents: [content], ...more };
      } catch (error) {
        if (error instanceof AppError) throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
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
        `A cell runs at most timeout_s seconds (default ${DEFAULT_PYTHON_TIMEOUT_S}); cancelling the call interrupts it.`,
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

function enabledSkill(session: ServedSession, name: string): SkillEntry {
  const entry = findSkill(session.view.snapshot, name);
  if (entry === undefined) throw new McpError(ErrorCode.InvalidParams, `no enabled skill named "${name}"; enabled: ${session.view.snapshot.skills.map((s) => s.name).join(", ") || "none"}`);
  return entry;
}

/** Arguments checked against `schema`; a mismatch is invalid params naming the field. */
function parsed<T>(schema: z.ZodType<T>, args: unknown, tool: string): T {
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length > 0 ? issue.path.join(".") : "arguments";
  throw new McpError(ErrorCode.InvalidParams, `${tool}: ${path}: ${issue.message}`);
}

function cursorOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const start = Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0) throw new McpError(ErrorCode.InvalidParams, `cursor "${cursor.slice(0, 40)}" is not one albedo handed out`);
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
