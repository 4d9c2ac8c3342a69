import { inspect } from "node:util";
import { expect } from "vitest";
import { DEFAULT_CONTEXT_TOKENS, ModelError, createAdapter, type AdapterOptions, type ModelAdapter, type ModelRequest, type ModelSettings, type ToolSpec } from "../../src/model/index.js";
import type { FakeOpenAI } from "./fakeOpenAI.js";

/** A key that must never show up in an error, a description or a log line. */
export const KEY = "sk-albedo-test-7Qm2ZpX9cVb4TnK8";
export const KEY_ENV = "ALBEDO_TEST_MODEL_KEY";
export const ENV = { [KEY_ENV]: KEY };

/** The python tool as the adapters' tests offer it. */
export const PYTHON_TOOL: ToolSpec = {
  name: "python",
  description: "Run Python in the session kernel.",
  parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
};

/** Settings of an openai adapter pointed at `baseUrl`. */
export function openaiSettings(baseUrl: string, extra: Partial<ModelSettings> = {}): ModelSettings {
  return { provider: "openai", baseUrl, name: "fake-model", apiKeyEnv: KEY_ENV, mode: "code", contextTokens: DEFAULT_CONTEXT_TOKENS, images: true, ...extra };
}

/** An openai adapter against the fake server, with the key in its environment. */
export function openaiAdapter(server: FakeOpenAI, options: AdapterOptions = {}, extra: Partial<ModelSettings> = {}): Promise<ModelAdapter> {
  return createAdapter(openaiSettings(server.baseUrl, extra), ENV, options);
}

/** A request with a system and a user message, no tools, a signal nobody aborts, unless overridden. */
export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [
      { role: "system", content: "You are a test." },
      { role: "user", content: "Say hello." },
    ],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** The ModelError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function modelFailure(promise: Promise<unknown>): Promise<ModelError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a ModelError, got a reply: ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ModelError);
  return outcome.error as ModelError;
}

/** Every way an error can be shown (message, string, deep inspection, JSON) is free of the key. */
export function expectNoKey(value: unknown): void {
  for (const text of [String(value), inspect(value, { depth: Infinity, showHidden: true }), JSON.stringify(value) ?? ""]) {
    expect(text).not.toContain(KEY);
  }
  if (value instanceof Error) expect(value.message).not.toContain(KEY);
}


/** Settings of an anthropic adapter pointed at `baseUrl`, its key in KEY_ENV. */
export function anthropicSettings(baseUrl: string, extra: Partial<ModelSettings> = {}): ModelSettings {
  return { ...openaiSettings(baseUrl), provider: "anthropic", name: "claude-fake", ...extra };
}

/** An anthropic adapter against a fake Messages API server, with the key in its environment. */
export function anthropicAdapter(server: { readonly baseUrl: string }, options: AdapterOptions = {}, extra: Partial<ModelSettings> = {}): Promise<ModelAdapter> {
  return createAdapter(anthropicSettings(server.baseUrl, extra), ENV, options);
}
