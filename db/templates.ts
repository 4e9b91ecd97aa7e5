/**
 * Agent templates: system templates (seeded, read-only, `owner_id: null`) plus each user's own. Every query filters
 * by what the caller may see; another user's template is indistinguishable from an unknown id.
 */
import type { Db, Filter } from 'mongodb';
import type { ActionType } from '../temporal/actions/types';
import type { JsonObject } from '../temporal/contract/json';

export type StepType = 'agent' | 'action';

export interface TemplateDoc {
  _id: string;
  /** null for system templates. */
  owner_id: string | null;
  system: boolean;
  /** Stable key of a seeded system template (idempotent seeding); absent on user templates. */
  system_key?: string;
  name: string;
  default_prompt: string;
  default_tools: string[];
  default_tasks: string[];
  tags: string[];
  short_description: string | null;
  step_type: StepType;
  /** Set for, and only for, `step_type: 'action'`. */
  action_type: ActionType | null;
  /** `provider:model`; null means the configured default (LLM_DEFAULT_MODEL). */
  model: string | null;
  /** Action defaults (validated by the action's own schema) or agent settings. */
  config: JsonObject;
  /** Agent steps: turn limit of the loop (null → default 8). */
  max_turns: number | null;
  /** Agent steps: JSON Schema the final answer must satisfy (null → free text). */
  output_schema: JsonObject | null;
  created_at: Date;
  updated_at: Date;
}

export function templatesCollection(db: Db) {
  return db.collection<TemplateDoc>('agent_templates');
}

/** What `ownerId` may see: system templates and their own. */
export function visibleTo(ownerId: string): Filter<TemplateDoc> {
  return { $or: [{ system: true }, { owner_id: ownerId }] };
}

/** One template the owner may use, or null (unknown id, or another user's). */
export async function findVisibleTemplate(db: Db, ownerId: string, id: string): Promise<TemplateDoc | null> {
  return templatesCollection(db).findOne({ _id: id, ...visibleTo(ownerId) });
}

/** The visible templates among `ids`, keyed by id (one query for a whole workflow). */
export async function findVisibleTemplates(db: Db, ownerId: string, ids: string[]): Promise<Map<string, TemplateDoc>> {
  const docs = await templatesCollection(db)
    .find({ _id: { $in: [...new Set(ids)] }, ...visibleTo(ownerId) })
    .toArray();
  return new Map(docs.map((d) => [d._id, d]));
}
