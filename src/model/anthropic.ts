/**
 * The `anthropic` adapter (O-10): the Messages API at any base URL, through the official
 * `@anthropic-ai/sdk` package, streamed (a plain JSON reply is taken too). The key is read once
 * from the variable `api_key_env` names (ANTHROPIC_API_KEY by default) and sent in `x-api-key`
 * only; nothing else the SDK would read from the environment (profiles, tokens, headers) is used.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { AdapterOptions, ModelAdapter, ModelDescription, ModelEnv, ModelReply, ModelRequest } from "./adapter.js";
import { MessageReader } from "./anthropicReply.js";
import { messageParams } from "./anthropicRequest.js";
import { readKey } from "./apiKey.js";
import type { CallControl } from "./callControl.js";
import { ModelError } from "./errors.js";
import { DEFAULT_MAX_TOKENS } from "./limits.js";
import { DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_KEY_ENV } from "./providers.js";
import { ReplyBuilder } from "./replyBuilder.js";
import type { ModelSettings } from "./resolve.js";
import { adapterLimits, readSdkReply, sdkCall } from "./sdkCall.js";
import type { SdkErrorClasses } from "./sdkErrors.js";
import { redactingLogger } from "./sdkLogger.js";
import { scopedFetch } from "./transport.js";

/** The SDK's variable of extra headers for every request; its names are dropped, so only what settings say reaches base_url. */
const AMBIENT_HEADERS_ENV = "ANTHROPIC_CUSTOM_HEADERS";
const ERRORS: SdkErrorClasses = { userAbort: APIUserAbortError, connectionTimeout: APIConnectionTimeoutError, connection: APIConnectionError, api: APIError };

/** The adapter for `settings`; throws ModelError `config` when the model name or the key is missing. */
export async function createAnthropicAdapter(settings: ModelSettings, env: ModelEnv, options: AdapterOptions): Promise<ModelAdapter> {
  const baseUrl = settings.baseUrl ?? DEFAULT_ANTHROPIC_BASE_URL;
  const model = settings.name;
  if (!model) throw new ModelError("config", `model.name is not set: name the Claude model to use (for example claude-sonnet-4-5)`);
  const key = readKey(settings.apiKeyEnv ?? DEFAULT_ANTHROPIC_KEY_ENV, env) as string;
  const maxTokens = settings.maxTokens ?? DEFAULT_MAX_TOKENS;
  const description: ModelDescription = { provider: "anthropic", baseUrl, model, mode: settings.mode, contextTokens: settings.contextTokens };
  const limits = adapterLimits(options);
  const client = new Anthropic({
    // A credential passed in code: the SDK then reads no ANTHROPIC_AUTH_TOKEN, profile or workload identity.
    apiKey: key,
    authToken: null,
    webhookKey: null,
    baseURL: baseUrl,
    // The SDK sends apiKey as a bearer token; the Messages API's own header is x-api-key.
    defaultHeaders: { ...droppedAmbientHeaders(), Authorization: null, "x-api-key": key },
    maxRetries: limits.maxRetries,
    timeout: limits.requestTimeoutMs,
    fetch: scopedFetch,
    openTelemetry: false,
    logger: options.log ? redactingLogger(options.log.logger, key) : undefined,
    logLevel: options.log?.level ?? "off",
  });
  const setup = { baseUrl, key, limits, errors: ERRORS, client };
  return {
    describe: () => description,
    complete: (request) => sdkCall(request, setup, (client, control) => run(client, { model, maxTokens, maxReplyBytes: limits.maxReplyBytes }, request, control)),
  };
}

interface RunSetup {
  readonly model: string;
  readonly maxTokens: number;
  readonly maxReplyBytes: number;
}

async function run(client: Anthropic, setup: RunSetup, request: ModelRequest, control: CallControl): Promise<ModelReply> {
  const builder = new ReplyBuilder(setup.maxReplyBytes, request.onText);
  const reader = new MessageReader(builder, setup.maxTokens);
  const { data: stream, response } = await client.messages.create(messageParams(setup.model, setup.maxTokens, request), { signal: control.signal }).withResponse();
  await readSdkReply(response, stream, (body) => reader.message(body), (event, count) => reader.event(event, count));
  reader.finish();
  return builder.build();
}

/** Each header name ANTHROPIC_CUSTOM_HEADERS sets, as null (which removes it). */
function droppedAmbientHeaders(): Record<string, null> {
  const names = (process.env[AMBIENT_HEADERS_ENV] ?? "").split("\n").flatMap((line) => (line.includes(":") ? [line.slice(0, line.indexOf(":")).trim()] : []));
  return Object.fromEntries(names.filter((name) => name !== "").map((name) => [name, null]));
}
