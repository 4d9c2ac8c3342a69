/**
 * The `openai` adapter (O-7): OpenAI-compatible chat completions at any base URL, through the
 * official `openai` package. Streams; takes a plain JSON reply too, for servers that ignore
 * `stream`. The key is read from the variable `api_key_env` names, once, and kept in a closure.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { AdapterOptions, ModelAdapter, ModelDescription, ModelEnv, ModelReply, ModelRequest } from "./adapter.js";
import { readKey } from "./apiKey.js";
import type { CallControl } from "./callControl.js";
import { ModelError } from "./errors.js";
import { readChunk, readCompletion } from "./openaiReply.js";
import { chatCompletionParams } from "./openaiRequest.js";
import { DEFAULT_OPENAI_BASE_URL } from "./providers.js";
import { ReplyBuilder } from "./replyBuilder.js";
import type { ModelSettings } from "./resolve.js";
import { adapterLimits, readSdkReply, sdkCall } from "./sdkCall.js";
import type { SdkErrorClasses } from "./sdkErrors.js";
import { redactingLogger } from "./sdkLogger.js";
import { scopedFetch } from "./transport.js";

/** What the SDK is given when no key variable is named; it requires a key, and the header carrying it is dropped. */
const NO_KEY = "no-key";
const ERRORS: SdkErrorClasses = { userAbort: APIUserAbortError, connectionTimeout: APIConnectionTimeoutError, connection: APIConnectionError, api: APIError };

/** The adapter for `settings`; throws ModelError `config` when the model name or the key variable is missing. */
export async function createOpenAIAdapter(settings: ModelSettings, env: ModelEnv, options: AdapterOptions): Promise<ModelAdapter> {
  const baseUrl = settings.baseUrl ?? DEFAULT_OPENAI_BASE_URL;
  const model = settings.name;
  if (!model) throw new ModelError("config", `model.name is not set: name the model the server at ${baseUrl} should run`);
  const key = readKey(settings.apiKeyEnv, env);
  const description: ModelDescription = { provider: "openai", baseUrl, model, mode: settings.mode, contextTokens: settings.contextTokens };
  const limits = adapterLimits(options);
  const client = new OpenAI({
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
    fetch: scopedFetch,
    logger: options.log ? redactingLogger(options.log.logger, key) : undefined,
    logLevel: options.log?.level ?? "off",
  });
  const setup = { baseUrl, key, limits, errors: ERRORS, client };
  return {
    describe: () => description,
    complete: (request) => sdkCall(request, setup, (client, control) => run(client, model, request, control, limits.maxReplyBytes)),
  };
}

async function run(client: OpenAI, model: string, request: ModelRequest, control: CallControl, maxReplyBytes: number): Promise<ModelReply> {
  const builder = new ReplyBuilder(maxReplyBytes, request.onText);
  const { data: stream, response } = await client.chat.completions.create(chatCompletionParams(model, request), { signal: control.signal }).withResponse();
  await readSdkReply(response, stream, (body) => readCompletion(body, builder), (chunk, count) => readChunk(chunk, count, builder));
  return builder.build();
}
