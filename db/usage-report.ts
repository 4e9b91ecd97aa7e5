/**
 * The usage view's reads (GET /api/v1/usage): an owner's counted tokens and calls over a range of UTC days, summed by
 * the groups asked for. Day, model, template and workflow come from the day documents (one per day, each with its
 * groups: db/usage.ts), so a year costs at most 400 small documents; thread comes from the call documents, which are
 * kept USAGE_CALL_KEEP_DAYS. Rows always keep their model apart, so each can be priced (a price is per model).
 */
import type { Db } from 'mongodb';
import type { UsageDimension } from '../domain/usage';
import { templatesCollection } from './templates';
import { USAGE_CALL_KEEP_DAYS, usageCallsCollection, usageCollection } from './usage';
import { workflowsCollection } from './workflows';

/** One row: the groups asked for (absent when not asked for; null when the calls had none), model always. */
export interface UsageRow {
  day?: string;
  model: string;
  template_id?: string | null;
  workflow_id?: string | null;
  thread_id?: string | null;
  input_tokens: number;
  output_tokens: number;
  calls: number;
}

export interface UsageRange {
  /** UTC days, `YYYY-MM-DD`, both included. */
  from: string;
  to: string;
  groupBy: readonly UsageDimension[];
}

/** The first day whose calls are all still kept (grouping by thread reaches no further back), counted from `today`. */
export function firstThreadDay(today: string): string {
  const d = new Date(`${today}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() - (USAGE_CALL_KEEP_DAYS - 1));
  return d.toISOString().slice(0, 10);
}

interface Counts {
  input_tokens: number;
  output_tokens: number;
  calls: number;
}

/** The owner's usage in the range, one row per group asked for and model; in no particular order. */
export async function readUsage(db: Db, ownerId: string, range: UsageRange): Promise<UsageRow[]> {
  return range.groupBy.includes('thread') ? byThread(db, ownerId, range) : byDay(db, ownerId, range);
}

async function byDay(db: Db, ownerId: string, range: UsageRange): Promise<UsageRow[]> {
  const days = await usageCollection(db)
    .find({ owner_id: ownerId, day: { $gte: range.from, $lte: range.to } }, { projection: { day: 1, groups: 1 } })
    .toArray();
  const rows = new Map<string, UsageRow>();
  for (const doc of days) {
    for (const g of Object.values(doc.groups ?? {})) {
      const row = rowOf(range.groupBy, {
        day: doc.day,
        model: g.model,
        template_id: g.template_id,
        workflow_id: g.workflow_id,
      });
      add(rows, row, g);
    }
  }
  return [...rows.values()];
}

async function byThread(db: Db, ownerId: string, range: UsageRange): Promise<UsageRow[]> {
  const calls = usageCallsCollection(db).aggregate<{
    _id: { day: string; model: string; template_id: string | null; workflow_id: string | null; thread_id?: string };
    input_tokens: number;
    output_tokens: number;
    calls: number;
  }>([
    { $match: { owner_id: ownerId, day: { $gte: range.from, $lte: range.to } } },
    {
      $group: {
        _id: {
          day: '$day',
          model: '$model',
          template_id: '$template_id',
          workflow_id: '$workflow_id',
          thread_id: '$thread_id',
        },
        input_tokens: { $sum: '$input_tokens' },
        output_tokens: { $sum: '$output_tokens' },
        calls: { $sum: 1 },
      },
    },
  ]);
  const rows = new Map<string, UsageRow>();
  for await (const g of calls) {
    add(rows, rowOf(range.groupBy, { ...g._id, thread_id: g._id.thread_id ?? null }), g);
  }
  return [...rows.values()];
}

/** The row a group of calls falls in: the dimensions asked for, and its model. */
function rowOf(
  groupBy: readonly UsageDimension[],
  g: { day: string; model: string; template_id: string | null; workflow_id: string | null; thread_id?: string | null },
): UsageRow {
  return {
    ...(groupBy.includes('day') ? { day: g.day } : {}),
    model: g.model,
    ...(groupBy.includes('template') ? { template_id: g.template_id ?? null } : {}),
    ...(groupBy.includes('workflow') ? { workflow_id: g.workflow_id ?? null } : {}),
    ...(groupBy.includes('thread') ? { thread_id: g.thread_id ?? null } : {}),
    input_tokens: 0,
    output_tokens: 0,
    calls: 0,
  };
}

function add(rows: Map<string, UsageRow>, row: UsageRow, counts: Counts): void {
  const key = JSON.stringify([row.day, row.model, row.template_id, row.workflow_id, row.thread_id]);
  const into = rows.get(key) ?? row;
  into.input_tokens += counts.input_tokens;
  into.output_tokens += counts.output_tokens;
  into.calls += counts.calls;
  rows.set(key, into);
}

/**
 * The names of the templates and workflows the rows name, by id (the caller's own and system templates; a deleted
 * one has none). Two reads by `_id`, beside each other.
 */
export async function usageNames(
  db: Db,
  ownerId: string,
  rows: readonly UsageRow[],
): Promise<{ templates: Map<string, string>; workflows: Map<string, string> }> {
  const ids = (pick: (r: UsageRow) => string | null | undefined) => [
    ...new Set(rows.map(pick).filter((id): id is string => typeof id === 'string')),
  ];
  const templateIds = ids((r) => r.template_id);
  const workflowIds = ids((r) => r.workflow_id);
  const [templates, workflows] = await Promise.all([
    templateIds.length === 0
      ? []
      : templatesCollection(db)
          .find(
            { _id: { $in: templateIds }, $or: [{ system: true }, { owner_id: ownerId }] },
            { projection: { name: 1 } },
          )
          .toArray(),
    workflowIds.length === 0
      ? []
      : workflowsCollection(db)
          .find({ _id: { $in: workflowIds }, owner_id: ownerId }, { projection: { name: 1 } })
          .toArray(),
  ]);
  return {
    templates: new Map(templates.map((t) => [t._id, t.name])),
    workflows: new Map(workflows.map((w) => [w._id, w.name])),
  };
}
