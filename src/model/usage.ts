/**
 * Token counts summed over model calls: a turn's, a chat's. Snake_case, since they are stored
 * with a turn's outcome and served as they are.
 */
import type { ModelAdapter, ModelUsage } from "./adapter.js";

export interface UsageTotals {
  /** Every prompt token sent, read from a cache or not. */
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** Of `input_tokens`, those the endpoint read from its prompt cache. */
  readonly cache_read_tokens: number;
  /** Of `input_tokens`, those the endpoint wrote to its prompt cache. */
  readonly cache_write_tokens: number;
  /** The model calls whose usage was reported (the others are not counted). */
  readonly model_calls: number;
}

export const NO_USAGE: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, model_calls: 0 };

/** `totals` plus `more`. */
export function sumUsage(totals: UsageTotals, more: UsageTotals): UsageTotals {
  return {
    input_tokens: totals.input_tokens + more.input_tokens,
    output_tokens: totals.output_tokens + more.output_tokens,
    cache_read_tokens: totals.cache_read_tokens + more.cache_read_tokens,
    cache_write_tokens: totals.cache_write_tokens + more.cache_write_tokens,
    model_calls: totals.model_calls + more.model_calls,
  };
}

/** One call's reported usage as totals. */
export function usageTotals(usage: ModelUsage): UsageTotals {
  return { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens, cache_read_tokens: usage.cacheReadTokens ?? 0, cache_write_tokens: usage.cacheWriteTokens ?? 0, model_calls: 1 };
}

/** `adapter`, counting the usage of every reply it returns; `totals()` is undefined until a reply reported usage. */
export function meteredAdapter(adapter: ModelAdapter): { readonly adapter: ModelAdapter; totals(): UsageTotals | undefined } {
  let totals: UsageTotals | undefined;
  return {
    adapter: {
      describe: () => adapter.describe(),
      async complete(request) {
        const reply = await adapter.complete(request);
        if (reply.usage) totals = sumUsage(totals ?? NO_USAGE, usageTotals(reply.usage));
        return reply;
      },
    },
    totals: () => totals,
  };
}

/** The totals in one line for people: `usage: 1,330 input tokens (1,000 read from cache, 310 written to it), 42 output, 2 model calls`. */
export function usageLine(totals: UsageTotals): string {
  const n = (value: number) => value.toLocaleString("en-US");
  const cache = totals.cache_read_tokens + totals.cache_write_tokens > 0 ? ` (${n(totals.cache_read_tokens)} read from cache, ${n(totals.cache_write_tokens)} written to it)` : "";
  return `usage: ${n(totals.input_tokens)} input tokens${cache}, ${n(totals.output_tokens)} output, ${n(totals.model_calls)} model call${totals.model_calls === 1 ? "" : "s"}`;
}
