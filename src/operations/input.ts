import type { Activation, SlashActivation } from "../skills/index.js";
import { canonicalJson } from "../json/index.js";

/** A person's message to the session. */
export interface MessageInput {
  readonly operationId: string;
  readonly type: "message";
  readonly text: string;
}

/**
 * A slash command typed by a person (C-6). `arguments` is the raw argument text; `activation` is
 * the skill payload the runtime prepared (C-5 shape), stored once with the admitted turn so that a
 * retry or a restart never rereads changed skill files. It is not part of what a replay is compared on.
 */
export interface CommandInput {
  readonly operationId: string;
  readonly type: "command";
  readonly command: string;
  readonly arguments: string;
  readonly activation?: Activation;
}

export type AdmitInput = MessageInput | CommandInput;

/** Fields whose outer whitespace carries no meaning (C-3 trims argument text the same way). */
const TRIMMED_FIELDS = new Set(["text", "command", "arguments"]);

/**
 * An input as it came, before anything but its id was checked: what a receipt lookup compares.
 * The lookup runs before any other validation (O-1), so a retry gets its first answer even when
 * its body would fail a later check.
 */
export interface ReplayCandidate {
  readonly operationId: string;
  readonly [field: string]: unknown;
}

/**
 * The text a replay is compared on: the session and the body without its id and activation,
 * strings trimmed where whitespace means nothing, keys sorted.
 */
export function requestKey(sessionId: string, input: ReplayCandidate | AdmitInput): string {
  const body: Record<string, unknown> = { sessionId };
  for (const [key, value] of Object.entries(input)) {
    if (key === "operationId" || key === "activation") continue;
    body[key] = TRIMMED_FIELDS.has(key) && typeof value === "string" ? value.trim() : value;
  }
  return canonicalJson(body);
}

/** What a turn shows in the transcript and, for a user slash activation, the activation it gives the model (C-6). */
export interface TurnTexts {
  readonly visibleText: string;
  readonly activation?: SlashActivation;
}

/** The transcript text and slash activation of a well-formed input. */
export function turnTexts(input: AdmitInput): TurnTexts {
  if (input.type === "message") return { visibleText: input.text.trim() };
  const command = input.command.trim();
  const args = input.arguments.trim();
  const visibleText = args.length > 0 ? `${command} ${args}` : command;
  return input.activation ? { visibleText, activation: { command, activation: input.activation } } : { visibleText };
}

/** The input as the inputs table keeps it: as sent, without the activation, which its turn stores (C-6). */
export function storedInput(input: AdmitInput, operationId: string): string {
  if (input.type === "message") return canonicalJson({ ...input, operationId });
  const { activation: _activation, ...sent } = input;
  return canonicalJson({ ...sent, operationId });
}
