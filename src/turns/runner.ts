/**
 * One turn (O-3): the model gets message[0], the conversation and the turn's input; every tool call
 * it makes is run and answered until it replies in prose, is interrupted, fails, or passes
 * MAX_TURN_STEPS. Whatever happens, the input and what was done stay in the conversation.
 */
import { isModelError, meteredAdapter, TOOL_ERROR_PREFIX, type UsageTotals, type ChatMessage, type ModelAdapter, type ModelReply, type ToolCall } from "../model/index.js";
import { activationBlock, findSkill, type SlashActivation } from "../skills/index.js";
import { compactIfNeeded, messageChars, TokenEstimate } from "./compaction.js";
import { systemPrompt, type Prompts, type ToolMode } from "./context.js";
import type { ConversationMessage, ConversationState } from "./conversation.js";
import { imageCount, ImageRefusal, keepNewestImages, refusesImages, withImageBytes, withoutImages } from "./images.js";
import { MAX_TURN_STEPS } from "./limits.js";
import { alreadyLoadedNote, PullLedger } from "./pulls.js";
import { mcpRow, type TranscriptRow } from "./rows.js";
import { mcpTools, runToolCall, toolsFor, toolSpec, TurnInterrupted, type McpTurnServers, type Tool, type ToolContext, type TurnHost, type TurnMcp } from "./tools/index.js";
import type { ToolSpec } from "../model/index.js";

/** The input of one turn. */
export interface TurnRequest {
  readonly turnId: string;
  /** What the transcript shows: the message, or the slash line as typed. */
  readonly visibleText: string;
  /** What the model receives: the message, or the JSON activation block (C-6). */
  readonly modelInput: string;
  /** For a user slash activation: the command and the activation stored with the admission; `modelInput` is its block. */
  readonly activation?: SlashActivation;
}

/** How a turn ended (O-3), with the tokens its model calls used when the endpoint reported them. */
export type TurnEnd = ({ readonly result: "completed"; readonly reply: string } | { readonly result: "failed"; readonly error: string } | { readonly result: "interrupted" }) & {
  readonly usage?: UsageTotals;
};

export interface TurnSetup {
  readonly adapter: ModelAdapter;
  readonly mode: ToolMode;
  readonly contextTokens: number;
  readonly prompts: Prompts;
  readonly host: TurnHost;
  /** Receives every transcript row as it happens (to store and stream it). */
  readonly emit: (row: TranscriptRow) => void;
  /** Receives the model's prose as it streams. */
  readonly onText?: (delta: string) => void;
  /** `model.images` (I-2): false sends a note instead of a cell's images; true when unset. */
  readonly images?: boolean;
  /** The session's memory that its endpoint refused images; a turn without one remembers for itself only. */
  readonly imageRefusal?: ImageRefusal;
}

/** Runs one turn over `state`; resolves with how it ended and the conversation after it. Never rejects for a model or tool failure. */
export async function runTurn(request: TurnRequest, state: ConversationState, setup: TurnSetup, signal: AbortSignal): Promise<{ end: TurnEnd; state: ConversationState }> {
  setup.emit({ kind: "user", text: request.visibleText });
  const ledger = new PullLedger(state.loaded, setup.emit);
  const restored = await restoreNotice(setup);
  const current: ConversationMessage[] = [{ role: "user", content: `${restored === undefined ? "" : `${restored}\n\n`}${userInput(request, ledger, setup.host)}` }];
  // Every call of the turn is counted, and its waits on the server told, a compaction's summary request's too.
  const metered = meteredAdapter(telling(setup.adapter, setup.emit));
  const turn = new TurnLoop({ ...setup, adapter: metered.adapter }, ledger, current, signal);
  // Every MCP call of the turn draws its row: the model's own (tool mode) and its code's.
  const observing = setup.host.mcp?.forTurns()?.observe((record) => setup.emit(mcpRow(record)));
  let end: TurnEnd;
  try {
    end = await turn.run(state);
  } finally {
    observing?.dispose();
  }
  const usage = metered.totals();
  return { end: usage === undefined ? end : { ...end, usage }, state: { turns: [...turn.turns, { turn_id: request.turnId, messages: current }], loaded: ledger.list() } };
}

/** The kernel's restore not yet told (K-15), drawn as a notice row; the text the model reads, or undefined. Waits for a restart under way. */
async function restoreNotice(setup: TurnSetup): Promise<string | undefined> {
  // A kernel that just died is being restarted: its restore is waited for, so the model reads what survived now.
  await setup.host.restores?.settled();
  const line = setup.host.restores?.takeNotice();
  if (line === undefined) return undefined;
  const text = `the kernel restarted and was restored from its checkpoint: ${line}`;
  setup.emit({ kind: "notice", text });
  return `[albedo] ${text}`;
}

/** The model input of the turn; a user activation draws its pull row, and a second one sends the note instead of the text. */
function userInput(request: TurnRequest, ledger: PullLedger, host: TurnHost): string {
  const slash = request.activation;
  if (slash === undefined) return request.modelInput;
  const { activation } = slash;
  const entry = findSkill(host.view.snapshot, activation.name);
  if (entry === undefined || !ledger.pull(entry, "user", activation.instructions)) return request.modelInput;
  return activationBlock({ ...slash, activation: { ...activation, instructions: alreadyLoadedNote(activation.name) } });
}

class TurnLoop {
  turns: ConversationState["turns"] = [];
  private readonly estimate = new TokenEstimate();
  /** The tools the last request offered: its calls are answered from these. */
  private tools: readonly Tool[] = [];
  private readonly imageRefusal: ImageRefusal;
  /** The base64 of the images the last request sent and those its calls just showed, for the turn's next request: each read from the store at most once a turn. */
  private readonly imageBytes = new Map<string, string>();

  constructor(
    private readonly setup: TurnSetup,
    private readonly ledger: PullLedger,
    private readonly current: ConversationMessage[],
    private readonly signal: AbortSignal,
  ) {
    this.imageRefusal = setup.imageRefusal ?? new ImageRefusal();
  }

  async run(state: ConversationState): Promise<TurnEnd> {
    this.turns = state.turns;
    try {
      for (let step = 0; step < MAX_TURN_STEPS; step += 1) {
        const calls = await this.step();
        if (calls === undefined) return { result: "completed", reply: lastText(this.current) };
        await this.answer(calls);
      }
      return this.fail(`the model made more than MAX_TURN_STEPS (${MAX_TURN_STEPS}) replies without answering in prose`);
    } catch (error) {
      this.closeOpenCalls();
      if (this.signal.aborted || error instanceof TurnInterrupted || isModelError(error, "interrupted")) {
        const more = error instanceof TurnInterrupted ? error.notice : undefined;
        this.setup.emit({ kind: "notice", text: more === undefined ? "interrupted" : `interrupted: ${more}` });
        return { result: "interrupted" };
      }
      return this.fail(error instanceof Error ? error.message : String(error));
    }
  }

  /** One model request; returns its tool calls, or undefined when it answered in prose. */
  private async step(): Promise<readonly ToolCall[] | undefined> {
    const { host, mode, prompts, adapter } = this.setup;
    const mcp = host.mcp?.forTurns();
    // Read once per request: the block and the function tools describe the same servers.
    const servers = mcp?.servers();
    const system: ChatMessage = { role: "system", content: systemPrompt(host.view.snapshot, mode, prompts, servers && mcpContext(servers)) };
    this.keepNewestImages();
    const compacted = await compactIfNeeded({
      system, state: { turns: this.turns, loaded: this.ledger.list() }, current: this.current,
      contextTokens: this.setup.contextTokens, estimate: this.estimate, adapter, signal: this.signal,
    });
    this.turns = compacted.turns;
    if (compacted.notice !== undefined) this.setup.emit({ kind: "notice", text: compacted.notice });
    const messages = [system, ...this.turns.flatMap((turn) => turn.messages), ...this.current];
    const specs = this.offer(mode === "tool" && mcp && servers ? { mcp, servers } : undefined);
    const reply = await this.complete(messages, specs);
    this.estimate.calibrate(messageChars(messages), reply.usage?.promptTokens);
    this.current.push(reply.toolCalls.length > 0 ? { role: "assistant", content: reply.text, tool_calls: reply.toolCalls } : { role: "assistant", content: reply.text });
    if (reply.text.trim() !== "") this.setup.emit({ kind: "assistant", text: reply.text });
    return reply.toolCalls.length > 0 ? reply.toolCalls : undefined;
  }

  /**
   * One model call of `messages`, their images read from the session's store, or replaced by a
   * note when `model.images` is false or the endpoint refused images before; an endpoint that
   * refuses them now (a 4xx naming images) is remembered for the session and asked once more
   * without them.
   */
  private async complete(messages: readonly ConversationMessage[], tools: readonly ToolSpec[]): Promise<ModelReply> {
    const call = async (sent: readonly ConversationMessage[]) =>
      this.setup.adapter.complete({
        messages: await withImageBytes(sent, this.setup.host.images, this.imageBytes), tools, signal: this.signal, ...(this.setup.onText ? { onText: this.setup.onText } : {}),
      });
    const off = this.imagesOff();
    if (off !== undefined || imageCount(messages) === 0) return call(off === undefined ? messages : withoutImages(messages, off));
    try {
      return await call(messages);
    } catch (error) {
      if (!refusesImages(error)) throw error;
      this.imageRefusal.reason = error instanceof Error ? error.message : String(error);
      this.setup.emit({ kind: "notice", text: "the model server refused images; this session sends a note in their place from now on" });
      return call(withoutImages(messages, this.imagesOff() ?? "images are off"));
    }
  }

  /** Why images are not sent now, or undefined when they are. */
  private imagesOff(): string | undefined {
    if (this.setup.images === false) return "model.images is false";
    const refused = this.imageRefusal.reason;
    return refused === undefined ? undefined : `the model server refused images earlier in this session (${refused})`;
  }

  /** Bounds the conversation, in what is sent and in what is kept, to the newest MAX_IMAGES_IN_CONTEXT images. */
  private keepNewestImages(): void {
    const groups = keepNewestImages([...this.turns.map((turn) => turn.messages), this.current]);
    this.turns = this.turns.map((turn, index) => (groups[index] === turn.messages ? turn : { ...turn, messages: groups[index]! }));
    const current = groups.at(-1)!;
    if (current !== this.current) this.current.splice(0, this.current.length, ...current);
  }

  /** Runs each call and appends its result; a call's own mistake is told to the model and the turn goes on. */
  private async answer(calls: readonly ToolCall[]): Promise<void> {
    const context: ToolContext = { host: this.setup.host, ledger: this.ledger, emit: this.setup.emit, signal: this.signal };
    for (const call of calls) {
      const { result, images, bytes, problem } = await runToolCall(call, this.tools, context).catch((error: unknown) => {
        if (error instanceof TurnInterrupted && error.result !== undefined) this.current.push({ role: "tool", tool_call_id: call.id, content: error.result });
        if (error instanceof TurnInterrupted || this.signal.aborted) throw error;
        const message = error instanceof Error ? error.message : String(error);
        return { result: `${TOOL_ERROR_PREFIX}${message}`, problem: `${call.name} failed: ${message}`, images: undefined, bytes: undefined };
      });
      if (problem !== undefined) this.setup.emit({ kind: "error", text: problem });
      // The images just shown are in memory: the next request need not read them back from the store.
      for (const [id, data] of bytes ?? []) this.imageBytes.set(id, data);
      // A kernel that died during the call and came back from its checkpoint: the model reads what survived with the result.
      const restored = await restoreNotice(this.setup);
      const content = restored === undefined ? result : `${result}\n\n${restored}`;
      this.current.push(images === undefined ? { role: "tool", tool_call_id: call.id, content } : { role: "tool", tool_call_id: call.id, content, images });
    }
  }

  /** The tools of this request: the view's, and in tool mode those of the MCP servers running now. */
  private offer(running: { mcp: TurnMcp; servers: McpTurnServers } | undefined): readonly ToolSpec[] {
    const own = toolsFor(this.setup.host.view, this.setup.mode);
    if (running === undefined) {
      this.tools = own.tools;
      return own.specs;
    }
    const extra = mcpTools(running.mcp, running.servers);
    this.tools = [...own.tools, ...extra];
    return [...own.specs, ...extra.map(toolSpec)];
  }

  private fail(error: string): TurnEnd {
    this.setup.emit({ kind: "error", text: error });
    return { result: "failed", error };
  }

  /** Answers every tool call still without a result, so the conversation stays well formed for the next request. */
  private closeOpenCalls(): void {
    const answered = new Set(this.current.flatMap((message) => (message.role === "tool" ? [message.tool_call_id] : [])));
    for (const message of [...this.current]) {
      if (message.role !== "assistant") continue;
      for (const call of message.tool_calls ?? []) {
        if (!answered.has(call.id)) this.current.push({ role: "tool", tool_call_id: call.id, content: "Not run: the turn ended before this call." });
      }
    }
  }
}

/** `adapter`, each call's notices (a wait the server asked for) drawn as notice rows. */
function telling(adapter: ModelAdapter, emit: TurnSetup["emit"]): ModelAdapter {
  return { describe: () => adapter.describe(), complete: (request) => adapter.complete({ ...request, onNotice: (text) => emit({ kind: "notice", text }) }) };
}

/** The running servers as message[0]'s block lists them. */
function mcpContext(servers: McpTurnServers) {
  return servers.map((server) => ({ name: server.name, tools: server.tools.map((tool) => ({ name: `${server.name}.${tool.tool}`, description: tool.description })) }));
}

function lastText(messages: readonly ConversationMessage[]): string {
  const last = messages.at(-1);
  return last?.role === "assistant" ? last.content : "";
}
