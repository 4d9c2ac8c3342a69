/**
 * The turn loop's own cost per tool step: from the moment a model reply is in hand to the moment
 * the next request goes out, minus the kernel's execute time (for a `python` step). An in-process
 * scripted adapter stands in for the model, so nothing but the runtime is timed: argument parsing,
 * the tool, the pull row, message building, message[0] and the compaction estimate. Also the
 * memory one conversation of 200 turns holds. `anthropic_step_ms` times the same python step with
 * the real Anthropic adapter and SDK against a local Messages API server: from the end of one
 * streamed reply on the wire to the next request's arrival, the kernel's time taken out.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createAdapter, DEFAULT_CONTEXT_TOKENS, type ModelAdapter, type ModelReply, type ModelRequest } from "../src/model/index.js";
import { Session } from "../src/session/index.js";
import { installDir } from "../src/platform/index.js";
import { EMPTY_CONVERSATION, loadPrompts, runTurn, type ConversationState, type TurnHost } from "../src/turns/index.js";
import { startFakeAnthropic } from "../test/model/fakeAnthropic.js";
import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

/** Tool steps timed per kind, after warm-up. */
const STEPS = 200;
const WARMUP_STEPS = 20;
/** Turns in the conversation whose memory is measured. */
const CONVERSATION_TURNS = 200;
/** Goal for a `skill` step (the target): under 5 ms of the runtime's own time. */
const SKILL_STEP_TARGET_MS = 5;
/** The same bound for a python step: the runtime's part of it, the kernel's time taken out. */
const PYTHON_STEP_TARGET_MS = 5;
/** The same bound with the Anthropic adapter in the loop: reading the stream's end, building and sending the next request. */
const ANTHROPIC_STEP_TARGET_MS = 5;
/** Goal: the heap one 200-turn conversation holds; sixteen of them stay well inside a small daemon. */
const CONVERSATION_HEAP_TARGET_MB = 32;

/** A model that replies from a script and notes when each reply left it and each request arrived. */
class ScriptedModel implements ModelAdapter {
  readonly replyDone: number[] = [];
  readonly requestAt: number[] = [];
  private next = 0;

  constructor(private readonly replies: readonly ModelReply[]) {}

  async complete(_request: ModelRequest): Promise<ModelReply> {
    this.requestAt.push(performance.now());
    const reply = this.replies[this.next++ % this.replies.length]!;
    this.replyDone.push(performance.now());
    return reply;
  }

  describe() {
    return { provider: "bench", model: "scripted", mode: "tool" as const, contextTokens: 1_000_000 };
  }
}

/** The session as a turn host, timing each execute so a python step's kernel time can be taken out. */
function timedHost(session: Session, executeMs: number[]): TurnHost {
  return {
    get workspace() { return session.workspace; },
    get stateDir() { return session.stateDir; },
    get view() { return session.view; },
    kernel: {
      execute(code) {
        const began = performance.now();
        const future = session.kernel.execute(code);
        void future.done.then(() => executeMs.push(performance.now() - began), () => undefined);
        return future;
      },
      interrupt: () => session.kernel.interrupt(),
    },
    skills: session.skills,
  };
}

const call = (id: string, name: string, args: object): ModelReply => ({
  text: "", toolCalls: [{ id, name, arguments: JSON.stringify(args) }], finishReason: "tool_calls",
});
const done: ModelReply = { text: "done", toolCalls: [], finishReason: "stop" };

/**
 * Tool steps in one bench turn, well under MAX_TURN_STEPS. A skill step is timed one per turn (a new
 * conversation each time), so each is a first load — activation, resource listing, wrapping — not
 * the cheaper "already loaded" answer.
 */
const STEPS_PER_TURN = { skill: 1, python: 10 } as const;

/** Runs turns of STEPS_PER_TURN calls of one tool until `steps` were timed; returns the runtime's time per step (kernel time removed). */
async function stepCosts(session: Session, tool: "skill" | "python", steps: number): Promise<number[]> {
  const args = tool === "skill" ? { name: "bench-skill" } : { code: "pass" };
  const costs: number[] = [];
  const perTurn = STEPS_PER_TURN[tool];
  while (costs.length < steps) {
    const executeMs: number[] = [];
    const model = new ScriptedModel([...Array.from({ length: perTurn }, (_, i) => call(`c${i}`, tool, args)), done]);
    const setup = { adapter: model, mode: "tool" as const, contextTokens: 1_000_000, prompts: loadPrompts(installDir()), host: timedHost(session, executeMs), emit: () => undefined };
    await runTurn({ turnId: "bench", visibleText: "go", modelInput: "go" }, EMPTY_CONVERSATION, setup, new AbortController().signal);
    for (let i = 0; i < perTurn; i++) costs.push(model.requestAt[i + 1]! - model.replyDone[i]! - (executeMs[i] ?? 0));
  }
  return costs.slice(0, steps);
}

/** Python steps through the anthropic adapter; returns the runtime's time per step: next request in minus last reply out, kernel time removed. */
async function anthropicStepCosts(session: Session, steps: number): Promise<number[]> {
  const server = await startFakeAnthropic();
  const keyEnv = "ALBEDO_BENCH_ANTHROPIC_KEY";
  const settings = { provider: "anthropic" as const, baseUrl: server.baseUrl, name: "claude-bench", apiKeyEnv: keyEnv, mode: "code" as const, contextTokens: DEFAULT_CONTEXT_TOKENS, images: true };
  const adapter = await createAdapter(settings, { [keyEnv]: "bench-key" });
  const perTurn = STEPS_PER_TURN.python;
  const costs: number[] = [];
  try {
    while (costs.length < steps) {
      const executeMs: number[] = [];
      server.requests.length = 0;
      for (let i = 0; i < perTurn; i++) server.enqueue({ kind: "reply", toolUses: [{ id: `toolu_${i}`, name: "python", input: '{"code": "pass"}' }], usage: { input_tokens: 10, output_tokens: 5 } });
      server.enqueue({ kind: "reply", text: "done" });
      const setup = { adapter, mode: "code" as const, contextTokens: 1_000_000, prompts: loadPrompts(installDir()), host: timedHost(session, executeMs), emit: () => undefined };
      await runTurn({ turnId: "bench", visibleText: "go", modelInput: "go" }, EMPTY_CONVERSATION, setup, new AbortController().signal);
      const sent = server.requests;
      for (let i = 0; i < perTurn; i++) costs.push(sent[i + 1]!.receivedAt - sent[i]!.answeredAt! - (executeMs[i] ?? 0));
    }
  } finally {
    await server.close();
  }
  return costs.slice(0, steps);
}

/** Heap held by a 200-turn conversation (each turn: a message, one skill pull, a prose answer), measured after GC when exposed. */
async function conversationMemory(session: Session): Promise<Record<string, unknown>> {
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  const before = process.memoryUsage();
  let state: ConversationState = EMPTY_CONVERSATION;
  const model = new ScriptedModel([call("s", "skill", { name: "bench-skill" }), { ...done, text: "x".repeat(2_000) }]);
  const setup = { adapter: model, mode: "tool" as const, contextTokens: 1_000_000, prompts: loadPrompts(installDir()), host: session, emit: () => undefined };
  for (let i = 0; i < CONVERSATION_TURNS; i++) {
    state = (await runTurn({ turnId: `t${i}`, visibleText: `message ${i}`, modelInput: `message ${i} ${"y".repeat(1_000)}` }, state, setup, new AbortController().signal)).state;
  }
  collect?.();
  const after = process.memoryUsage();
  const heapMb = (after.heapUsed - before.heapUsed) / 2 ** 20;
  return { turns: state.turns.length, heap_mb: round(heapMb), ...limitGoal(heapMb, CONVERSATION_HEAP_TARGET_MB), rss_mb: round((after.rss - before.rss) / 2 ** 20), gc_exposed: collect ? 1 : 0 };
}

export async function benchTurns(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(join(tmpdir(), "alb-bench-turns-"));
  const dirs = { workspace: join(root, "ws"), home: join(root, "home"), state: join(root, "st") };
  await Promise.all(Object.values(dirs).map((dir) => mkdir(dir)));
  const skill = join(dirs.workspace, ".albedo", "skills", "bench-skill");
  await mkdir(join(skill, "references"), { recursive: true });
  await writeFile(join(skill, "SKILL.md"), `---\nname: bench-skill\ndescription: A skill to pull.\n---\n${"Do the step.\n".repeat(250)}`);
  await writeFile(join(skill, "references", "notes.md"), "notes\n");
  const session = await Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home } });
  try {
    const skillSteps = (await stepCosts(session, "skill", STEPS + WARMUP_STEPS)).slice(WARMUP_STEPS);
    const pythonSteps = (await stepCosts(session, "python", STEPS + WARMUP_STEPS)).slice(WARMUP_STEPS);
    const anthropicSteps = (await anthropicStepCosts(session, STEPS + WARMUP_STEPS)).slice(WARMUP_STEPS);
    const skillMedian = median(skillSteps);
    return {
      skill_step_ms: { median: round(skillMedian), p99: round(percentile(skillSteps, 99)), ...limitGoal(skillMedian, SKILL_STEP_TARGET_MS) },
      python_step_ms: { median: round(median(pythonSteps)), p99: round(percentile(pythonSteps, 99)), note: "kernel execute time removed", ...limitGoal(median(pythonSteps), PYTHON_STEP_TARGET_MS) },
      anthropic_step_ms: {
        median: round(median(anthropicSteps)), p99: round(percentile(anthropicSteps, 99)),
        note: "python step through the real Anthropic adapter and SDK over loopback HTTP, kernel execute time removed",
        ...limitGoal(median(anthropicSteps), ANTHROPIC_STEP_TARGET_MS),
      },
      conversation_200_turns: await conversationMemory(session),
    };
  } finally {
    await session.close();
    await rm(root, { recursive: true, force: true });
  }
}
