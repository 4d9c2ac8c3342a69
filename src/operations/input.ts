import type { Activation } from "../skills/index.js";
import { canonicalJson } from "../json/index.js";
import { MAX_INPUT_NAME_LENGTH, MAX_INPUT_TEXT_BYTES } from "./limits.js";

/** A person's message to the session. */
export interface MessageInput {
  readonly operationId: string;
  readonly type: "message";
  readonly text: string;
}

/**
 * A slash command typed by a person (C-6). `arguments` is the raw argument text; `activation` is
 * the skill payload the runtime prepared (C-5 shape), stored with the admission so that a retry or
 * a restart never rereads changed skill files. It is not part of what a replay is compared on.
 */
export interface CommandInput {
  readonly operationId: string;
  readonly type: "command";
  readonly command: string;
  readonly arguments: string;
  readonly activation?: Activation;
}

export type AdmitInput = MessageInput | CommandInput;

const MESSAGE_FIELDS = ["operationId", "type", "text"];
const COMMAND_FIELDS = ["operationId", "type", "command", "arguments", "activation"];
const ACTIVATION_FIELDS = ["name", "description", "source", "arguments", "instructions"];
/** Fields whose outer whitespace carries no meaning (C-3 trims argument text the same way). */
const TRIMMED_FIELDS = new Set(["text", "command", "arguments"]);

/**
 * The text a replay is compared on: the session and the body without its id and activation,
 * strings trimmed where whitespace means nothing, keys sorted.
 */
export function requestKey(sessionId: string, input: object): string {
  const body: Record<string, unknown> = { sessionId };
  for (const [key, value] of Object.entries(input)) {
    if (key === "operationId" || key === "activation") continue;
    body[key] = TRIMMED_FIELDS.has(key) && typeof value === "string" ? value.trim() : value;
  }
  return canonicalJson(body);
}

/** Why `input` is not a well-formed AdmitInput (ids are checked apart), or undefined when it is. */
export function inputProblem(input: object): string | undefined {
  const record = input as Record<string, unknown>;
  if (record.type === "message") return strayField(record, MESSAGE_FIELDS, "a message") ?? textProblem(record.text, "text", false);
  if (record.type !== "command") return `type must be "message" or "command", got ${JSON.stringify(record.type) ?? "nothing"}`;
  const stray = strayField(record, COMMAND_FIELDS, "a command");
  if (stray) return stray;
  const command = record.command;
  if (typeof command !== "string" || !/^\/\S+$/.test(command.trim()) || command.length > MAX_INPUT_NAME_LENGTH) {
    return `command must be a slash name such as "/demo" of at most ${MAX_INPUT_NAME_LENGTH} characters`;
  }
  return textProblem(record.arguments, "arguments", true) ?? (record.activation === undefined ? undefined : activationProblem(record.activation));
}

function strayField(record: Record<string, unknown>, allowed: readonly string[], what: string): string | undefined {
  const stray = Object.keys(record).find((key) => !allowed.includes(key));
  return stray === undefined ? undefined : `unknown field "${stray}" in ${what}; allowed: ${allowed.join(", ")}`;
}

function textProblem(value: unknown, field: string, mayBeEmpty: boolean): string | undefined {
  if (typeof value !== "string") return `${field} must be a string`;
  if (!mayBeEmpty && value.trim().length === 0) return `${field} must not be empty`;
  const size = Buffer.byteLength(value);
  if (size > MAX_INPUT_TEXT_BYTES) return `${field} is ${size} bytes; at most ${MAX_INPUT_TEXT_BYTES} (MAX_INPUT_TEXT_BYTES)`;
  return undefined;
}

function activationProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "activation must be an object";
  const record = value as Record<string, unknown>;
  const stray = strayField(record, ACTIVATION_FIELDS, "an activation");
  if (stray) return stray;
  for (const key of ["name", "description", "source", "instructions"]) {
    if (typeof record[key] !== "string") return `activation.${key} must be a string`;
  }
  const args = record.arguments;
  if (typeof args === "string") return undefined;
  const isMapping = typeof args === "object" && args !== null && !Array.isArray(args) && Object.values(args).every((item) => typeof item === "string");
  return isMapping ? undefined : "activation.arguments must be a string or a mapping of strings";
}

/** What a turn shows in the transcript and what it gives the model (C-6). */
export interface TurnTexts {
  readonly visibleText: string;
  readonly modelInput: string;
}

/** The transcript text and model input of a well-formed input. */
export function turnTexts(input: AdmitInput): TurnTexts {
  if (input.type === "message") return { visibleText: input.text.trim(), modelInput: input.text.trim() };
  const command = input.command.trim();
  const args = input.arguments.trim();
  const visibleText = args.length > 0 ? `${command} ${args}` : command;
  return { visibleText, modelInput: input.activation ? activationBlock(command, input.activation) : visibleText };
}

/**
 * The model's view of a slash activation: one JSON object, so nothing in the instructions can
 * end the block early or pose as the runtime; arguments are passed exactly as the skill received them.
 */
export function activationBlock(command: string, activation: Activation): string {
  return JSON.stringify({
    skill_activation: {
      command,
      name: activation.name,
      source: activation.source,
      arguments: activation.arguments,
      instructions: activation.instructions,
    },
  });
}
