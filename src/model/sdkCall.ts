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
  MODEL_MAX_RETRIES,
  MODEL_REPLY_TIMEOUT_MS,
  MODEL_REQUEST_TIMEOUT_MS,
  MODEL_STREAM_IDLE_TIMEOUT_MS,
} from "./limits.js";
import { toModelError, type SdkErrorClasses } from "./sdkErrors.js";
import { callTransport, withTransport } from "./transport.js";

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
  const transport = callTransport(limits.maxResponseBytes, () => control.progress());
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
    const context = { server: baseUrl, key: setup.key, requestTimeoutMs: limits.requestTimeoutMs, attempts: transport.attempts(), errorBody: transport.lastErrorBody() };
    throw control.stopError() ?? toModelError(error, context, setup.errors);
  } finally {
    control.dispose();
    running.catch(() => undefined);
  }
}

/** The media type of a response, lower case, without parameters ("" when absent). */
export function contentTypeOf(response: Response): string {
  return response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
}
