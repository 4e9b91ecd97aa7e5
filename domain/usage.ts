/**
 * Totals of LLM usage, by one rule wherever they are made (a step's calls, a run's steps): the counts add up, and a
 * total with an estimated part (a call whose provider reported no usage) is itself marked estimated.
 */
import type { Usage } from './run';
import type { TokenUsage } from './transcript';

/** The sum of `items`; `estimated` is present (true) only when one of them is. */
export function sumUsage(items: Iterable<Usage>): Usage {
  const total: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  for (const u of items) {
    total.llm_calls += u.llm_calls;
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    if (u.estimated) total.estimated = true;
  }
  return total;
}

/** One model call's usage as a step's usage (one call). */
export function callUsage(call: TokenUsage): Usage {
  return {
    llm_calls: 1,
    input_tokens: call.input_tokens,
    output_tokens: call.output_tokens,
    ...(call.estimated ? { estimated: true } : {}),
  };
}

/** USD per million input and output tokens, by model as steps name it (the operator's `MODEL_PRICES`). */
export type ModelPrices = Readonly<Record<string, { input: number; output: number }>>;

/** What `tokens` of `model` cost by `prices`; undefined when no price covers the model. */
export function costOf(
  prices: ModelPrices,
  model: string,
  tokens: { input_tokens: number; output_tokens: number },
): number | undefined {
  const price = Object.prototype.hasOwnProperty.call(prices, model) ? prices[model] : undefined;
  if (!price) return undefined;
  return (tokens.input_tokens * price.input + tokens.output_tokens * price.output) / 1_000_000;
}

/** What the usage view (GET /api/v1/usage) groups counted calls by. */
export const USAGE_DIMENSIONS = ['day', 'model', 'template', 'workflow', 'thread'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];
