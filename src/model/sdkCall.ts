/**
 * One model call through an official SDK, as every SDK adapter makes it: under one CallControl
 * (the caller's signal, the reply and idle deadlines), through a per-call transport (no
 * redirects, a byte bound), and failing with a ModelError only.
 */
import type { AdapterOptions, ModelReply, ModelRequest } from "./adapter.js";
import { CallControl } from "./callControl.js";
import {
  MAX_MODEL_REPLY_BYTES,
  MAX_MODEL_RESPONSE_BYTES,
  MAX_MODEL_SSE_EVENT_BYTES,
  MODEL_MAX_RETRIES,
  MODEL_MAX_RETRY_WAIT_MS,
  MODEL_REPLY_TIMEOUT_MS,
  MODEL_REQUEST_TIMEOUT_MS,
  MODEL_STREAM_IDLE_TIMEOUT_MS,
} from "./limits.js";
import { ModelError, quoteServerText } from "./errors.js";
import { toModelError, type SdkErrorClasses } from "./sdkErrors.js";
import { waitText } from "./retryWait.js";
import { callTransport, mediaTypeOf, withTransport } from "./transport.js";

/** The deadlines and bounds of one adapter, overrides applied. */
export type AdapterLimits = Required<Omit<AdapterOptions, "log">>;

/** `options` with each unset deadline or bound at its named default. */
export function adapterLimits(options: AdapterOptions): AdapterLimits {
  return {
    requestTimeoutMs: options.requestTimeoutMs ?? MODEL_REQUEST_TIMEOUT_MS,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs ?? MODEL_STREAM_IDLE_TIMEOUT_MS,
    replyTimeoutMs: options.replyTimeoutMs ?? MODEL_REPLY_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? MODEL_MAX_RETRIES,
    maxReplyBytes: options.maxReplyBytes ?? MAX_MODEL_REPLY_BYTES,
    maxResponseBytes: options.maxResponseBytes ?? MAX_MODEL_RESPONSE_BYTES,
    maxSseEventBytes: options.maxSseEventBytes ?? MAX_MODEL_SSE_EVENT_BYTES,
    maxRetryWaitMs: options.maxRetryWaitMs ?? MODEL_MAX_RETRY_WAIT_MS,
  };
}

export interface SdkCallSetup<Client> {
  readonly baseUrl: string;
  /** Only so that failures can keep it out of their messages. */
  readonly key: string | undefined;
  readonly limits: AdapterLimits;
  readonly errors: SdkErrorClasses;
  /** The adapter's one client, made with `scopedFetch` (so each call's requests go through its own transport). */
  readonly client: Client;
}

/** Runs `work` with the adapter's client under the call's control, its requests through this call's transport; resolves with its reply, rejects with a ModelError (or what `onText` threw). */
export async function sdkCall<Client>(request: ModelRequest, setup: SdkCallSetup<Client>, work: (client: Client, control: CallControl) => Promise<ModelReply>): Promise<ModelReply> {
  const { baseUrl, limits } = setup;
  const control = new CallControl(request.signal, limits, baseUrl);
  const early = control.stopError();
  if (early) {
    control.dispose();
    throw early;
  }
  const transport = callTransport({
    maxBytes: limits.maxResponseBytes,
    maxEventBytes: limits.maxSseEventBytes,
    maxRetries: limits.maxRetries,
    maxRetryWaitMs: limits.maxRetryWaitMs,
    signal: control.signal,
    onProgress: () => control.progress(),
    onRetryWait: (waitMs, status) =>
      request.onNotice?.(`the model server at ${baseUrl} answered HTTP ${status} and asked to wait ${waitText(waitMs)} before trying again; waiting (attempt ${transport.attempts() + 1} of ${limits.maxRetries + 1})`),
  });
  const running = (async () => {
    const reply = await withTransport(transport, () => work(setup.client, control));
    // The SDKs end a stream quietly when it is aborted; the stop must not pass for a finished reply.
    const stopped = control.stopError();
    if (stopped) throw stopped;
    return reply;
  })();
  try {
    // The race, because an SDK's wait before a retry cannot be cut short by the signal.
    return await Promise.race([running, control.stopped]);
  } catch (error) {
    const context = {
      server: baseUrl, key: setup.key, requestTimeoutMs: limits.requestTimeoutMs, attempts: transport.attempts(), errorBody: transport.lastErrorBody(),
      refusedWaitMs: transport.refusedWaitMs(), maxRetryWaitMs: limits.maxRetryWaitMs,
    };
    throw control.stopError() ?? toModelError(error, context, setup.errors);
  } finally {
    control.dispose();
    running.catch(() => undefined);
  }
}

/**
 * Reads an SDK call's answer by its media type: a JSON body whole to `whole`, an event stream
 * (or an untyped one) event by event to `each` with its 1-based count; anything else is a
 * ModelError `malformed`.
 */
export async function readSdkReply<Event>(response: Response, stream: AsyncIterable<Event>, whole: (body: unknown) => void, each: (event: Event, count: number) => void): Promise<void> {
  const type = mediaTypeOf(response);
  if (type === "application/json") {
    whole(JSON.parse(await response.text()) as unknown);
  } else if (type === "text/event-stream" || type === "") {
    let count = 0;
    for await (const event of stream) each(event, ++count);
  } else {
    throw new ModelError("malformed", `the model server answered with content type ${quoteServerText(type, undefined)}, neither an event stream nor JSON`);
  }
}

