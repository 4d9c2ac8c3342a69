/**
 * The `openai` adapter (O-7): OpenAI-compatible chat completions at any base URL, through the
 * official `openai` package. Streams; takes a plain JSON reply too, for servers that ignore
 * `stream`. The key is read from the variable `api_key_env` names, once, and kept in a closure.
 */
import { inspect } from "node:util";
import OpenAI from "openai";
import type { AdapterOptions, ModelAdapter, ModelDescription, ModelEnv, ModelLogger, ModelReply, ModelRequest } from "./adapter.js";
import { CallControl } from "./callControl.js";
import { ModelError, quoteServerText, withoutSecret } from "./errors.js";
import {
  MAX_MODEL_REPLY_BYTES,
  MAX_MODEL_RESPONSE_BYTES,
  MODEL_MAX_RETRIES,
  MODEL_REPLY_TIMEOUT_MS,
  MODEL_REQUEST_TIMEOUT_MS,
  MODEL_STREAM_IDLE_TIMEOUT_MS,
} from "./limits.js";
import { toModelError } from "./openaiErrors.js";
import { readChunk, readCompletion } from "./openaiReply.js";
import { chatCompletionParams } from "./openaiRequest.js";
import { ReplyBuilder } from "./replyBuilder.js";
import type { ModelSettings } from "./resolve.js";
import { callTransport, type CallTransport } from "./transport.js";

/** `model.base_url` when unset: OpenAI's own API. */
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";
/** What the SDK is given when no key variable is named; it requires a key, and the header carrying it is dropped. */
const NO_KEY = "no-key";
/** Characters an HTTP header value can carry (visible ASCII); fetch would otherwise throw an error quoting the key. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;
/** Levels of objects the SDK logs that are rendered (then redacted) before reaching an injected logger. */
const LOG_INSPECT_DEPTH = 6;

type Limits = Required<Omit<AdapterOptions, "log">>;

/** The adapter for `settings`; throws ModelError `config` when the model name or the key variable is missing. */
export async function createOpenAIAdapter(settings: ModelSettings, env: ModelEnv, options: AdapterOptions): Promise<ModelAdapter> {
  const baseUrl = settings.baseUrl ?? DEFAULT_OPENAI_BASE_URL;
  const model = settings.name;
  if (!model) throw new ModelError("config", `model.name is not set: name the model the server at ${baseUrl} should run`);
  const key = readKey(settings.apiKeyEnv, env);
  const description: ModelDescription = { provider: "openai", baseUrl, model, mode: settings.mode, contextTokens: settings.contextTokens };
  const limits = limitsOf(options);
  const clientFor = (transport: CallTransport): OpenAI =>
    new OpenAI({
      apiKey: key ?? NO_KEY,
      baseURL: baseUrl,
      // Explicit nulls: the SDK would otherwise read OPENAI_ADMIN_KEY, OPENAI_ORG_ID, … from the
      // process environment and send them to base_url.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      defaultHeaders: key === undefined ? { Authorization: null } : undefined,
      maxRetries: limits.maxRetries,
      timeout: limits.requestTimeoutMs,
      fetch: transport.fetch,
      logger: options.log ? redactingLogger(options.log.logger, key) : undefined,
      logLevel: options.log?.level ?? "off",
    });
  return {
    describe: () => description,
    complete: (request) => complete(request, { baseUrl, key, model, limits, clientFor }),
  };
}

interface CallSetup {
  readonly baseUrl: string;
  readonly key: string | undefined;
  readonly model: string;
  readonly limits: Limits;
  readonly clientFor: (transport: CallTransport) => OpenAI;
}

async function complete(request: ModelRequest, setup: CallSetup): Promise<ModelReply> {
  const { baseUrl, limits } = setup;
  const control = new CallControl(request.signal, limits, baseUrl);
  const early = control.stopError();
  if (early) {
    control.dispose();
    throw early;
  }
  const transport = callTransport(limits.maxResponseBytes, () => control.progress());
  const work = run(setup.clientFor(transport), setup.model, request, control, limits.maxReplyBytes);
  try {
    // The race, because the SDK's wait before a retry cannot be cut short by the signal.
    return await Promise.race([work, control.stopped]);
  } catch (error) {
    throw control.stopError() ?? toModelError(error, { server: baseUrl, key: setup.key, requestTimeoutMs: limits.requestTimeoutMs, attempts: transport.attempts(), errorBody: transport.lastErrorBody() });
  } finally {
    control.dispose();
    work.catch(() => undefined);
  }
}

async function run(client: OpenAI, model: string, request: ModelRequest, control: CallControl, maxReplyBytes: number): Promise<ModelReply> {
  const builder = new ReplyBuilder(maxReplyBytes, request.onText);
  const { data: stream, response } = await client.chat.completions.create(chatCompletionParams(model, request), { signal: control.signal }).withResponse();
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/json") {
    readCompletion(JSON.parse(await response.text()) as unknown, builder);
  } else if (type === "text/event-stream" || type === "") {
    let count = 0;
    for await (const chunk of stream) readChunk(chunk, ++count, builder);
  } else {
    throw new ModelError("malformed", `the model server answered with content type ${quoteServerText(type, undefined)}, neither an event stream nor JSON`);
  }
  // The SDK ends a stream quietly when it is aborted; the stop must not pass for a finished reply.
  const stopped = control.stopError();
  if (stopped) throw stopped;
  return builder.build();
}

/** The key from the variable `name`, or undefined when no variable is named (a local server without keys). */
function readKey(name: string | undefined, env: ModelEnv): string | undefined {
  if (name === undefined) return undefined;
  const key = env[name]?.trim();
  if (!key) throw new ModelError("config", `model.api_key_env names the environment variable ${name}, which is not set or empty: export the API key in it`);
  if (!HEADER_SAFE.test(key)) throw new ModelError("config", `the environment variable ${name} holds characters an HTTP header cannot carry (spaces or control characters), so it cannot be the API key`);
  return key;
}

/**
 * `logger` with the key taken out of every line. The SDK hides the Authorization header, but
 * quotes what a server sends back (an unparsable line, an error body), and a server may echo the key.
 */
function redactingLogger(logger: ModelLogger, key: string | undefined): ModelLogger {
  const clean = (item: unknown): string => withoutSecret(typeof item === "string" ? item : inspect(item, { depth: LOG_INSPECT_DEPTH }), key);
  const wrap =
    (level: keyof ModelLogger) =>
    (message: string, ...rest: unknown[]): void =>
      logger[level](clean(message), ...rest.map(clean));
  return { error: wrap("error"), warn: wrap("warn"), info: wrap("info"), debug: wrap("debug") };
}

function limitsOf(options: AdapterOptions): Limits {
  return {
    requestTimeoutMs: options.requestTimeoutMs ?? MODEL_REQUEST_TIMEOUT_MS,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs ?? MODEL_STREAM_IDLE_TIMEOUT_MS,
    replyTimeoutMs: options.replyTimeoutMs ?? MODEL_REPLY_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? MODEL_MAX_RETRIES,
    maxReplyBytes: options.maxReplyBytes ?? MAX_MODEL_REPLY_BYTES,
    maxResponseBytes: options.maxResponseBytes ?? MAX_MODEL_RESPONSE_BYTES,
  };
}
