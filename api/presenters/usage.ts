/**
 * Counted usage → the usage view (GET /api/v1/usage): one row per group asked for, with tokens, calls and their cost
 * from the operator's price table (`MODEL_PRICES`, USD per million tokens by model). A row's cost is null when any of
 * its calls was made with a model the table does not price: a partial sum would look like the whole.
 */
import { z } from 'zod';
import type { Config } from '../../config';
import type { UsageRow } from '../../db/usage-report';
import { costOf, USAGE_DIMENSIONS, type UsageDimension } from '../../domain/usage';

const counts = {
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  tokens: z.number().int().meta({ description: 'Input and output tokens together (what the daily budget counts).' }),
  calls: z.number().int().meta({ description: 'Model calls counted.' }),
  cost_usd: z.number().nullable().meta({
    description: 'From the operator’s price table; null when a model of these calls has no price there.',
  }),
};

export const usageRowView = z
  .strictObject({
    day: z.string().optional().meta({ description: 'UTC day (grouped by day).' }),
    model: z.string().optional().meta({ description: 'The model as the step names it (grouped by model).' }),
    template_id: z.string().nullable().optional().meta({ description: 'Agent template (grouped by template).' }),
    template_name: z.string().nullable().optional().meta({ description: 'Its name; null when it is gone.' }),
    workflow_id: z.string().nullable().optional().meta({ description: 'Workflow (grouped by workflow).' }),
    workflow_name: z.string().nullable().optional().meta({ description: 'Its name; null when it is gone.' }),
    thread_id: z
      .string()
      .nullable()
      .optional()
      .meta({ description: 'Thread (grouped by thread); null for runs outside a thread.' }),
    ...counts,
  })
  .meta({ id: 'UsageRow' });

export const usageView = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    group_by: z.array(z.enum(USAGE_DIMENSIONS)),
    currency: z.literal('USD'),
    rows: z.array(usageRowView).meta({ description: 'By day (oldest first), then most tokens first.' }),
    total: z.strictObject(counts),
  })
  .meta({ id: 'Usage' });

export type UsageView = z.infer<typeof usageView>;
type RowView = z.infer<typeof usageRowView>;

/** The rows (each of one model) as the view: merged over models unless grouped by model, priced. */
export function presentUsage(
  rows: readonly UsageRow[],
  query: { from: string; to: string; groupBy: readonly UsageDimension[] },
  prices: Config['MODEL_PRICES'],
  names: { templates: Map<string, string>; workflows: Map<string, string> },
): UsageView {
  const byModel = query.groupBy.includes('model');
  const merged = new Map<string, RowView>();
  const total = { input_tokens: 0, output_tokens: 0, tokens: 0, calls: 0, cost_usd: 0 as number | null };
  for (const r of rows) {
    const cost = costOf(prices, r.model, r) ?? null;
    const row: RowView = {
      ...(r.day !== undefined ? { day: r.day } : {}),
      ...(byModel ? { model: r.model } : {}),
      ...(r.template_id !== undefined
        ? { template_id: r.template_id, template_name: nameOf(names.templates, r.template_id) }
        : {}),
      ...(r.workflow_id !== undefined
        ? { workflow_id: r.workflow_id, workflow_name: nameOf(names.workflows, r.workflow_id) }
        : {}),
      ...(r.thread_id !== undefined ? { thread_id: r.thread_id } : {}),
      input_tokens: 0,
      output_tokens: 0,
      tokens: 0,
      calls: 0,
      cost_usd: 0,
    };
    const key = JSON.stringify([row.day, row.model, row.template_id, row.workflow_id, row.thread_id]);
    const into = merged.get(key) ?? row;
    for (const t of [into, total]) {
      t.input_tokens += r.input_tokens;
      t.output_tokens += r.output_tokens;
      t.tokens += r.input_tokens + r.output_tokens;
      t.calls += r.calls;
      t.cost_usd = t.cost_usd === null || cost === null ? null : t.cost_usd + cost;
    }
    merged.set(key, into);
  }
  const out = [...merged.values()].map((r) => ({ ...r, cost_usd: rounded(r.cost_usd) }));
  out.sort((a, b) => (a.day ?? '').localeCompare(b.day ?? '') || b.tokens - a.tokens);
  return {
    from: query.from,
    to: query.to,
    group_by: [...query.groupBy],
    currency: 'USD',
    rows: out,
    total: { ...total, cost_usd: rounded(total.cost_usd) },
  };
}

function nameOf(names: Map<string, string>, id: string | null): string | null {
  return id === null ? null : (names.get(id) ?? null);
}

/** To a millionth of a dollar: sums of prices per million tokens carry float noise below it. */
function rounded(cost: number | null): number | null {
  return cost === null ? null : Math.round(cost * 1_000_000) / 1_000_000;
}
