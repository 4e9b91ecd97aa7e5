/**
 * Agent templates: system templates (seeded, read-only, `owner_id: null`) plus each user's own. Every query filters
 * by what the caller may see; another user's template is indistinguishable from an unknown id.
 */
import type { Db, Filter } from 'mongodb';
import type { ActionType } from '../domain/action-types';
import type { EgressSettings } from '../domain/egress';
import type { JsonObject } from '../domain/json';
import type { McpToolSelection } from '../domain/mcp';
import { newId } from './ids';
import { loadedSchema, storedSchema } from './schema-keys';
import { findPage, type Page, type PageOrder, type PageRequest } from './paging';
import { bumpTemplateVersion } from './template-versions';

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
  /** Agent steps: where its e-mail and HTTP may go (absent on templates stored before the field existed: defaults). */
  egress?: EgressSettings;
  /** Agent steps: tools from the owner's MCP servers (absent: none). */
  mcp_tools?: McpToolSelection[];
  /** Agent steps in a thread: tokens of earlier turns each turn is given (absent or null: DEFAULT_CONTEXT_TOKENS). */
  context_tokens?: number | null;
  /** Agent steps in a thread: JSON Schema of the thread's working memory (absent or null: none). */
  memory_schema?: JsonObject | null;
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
/** A template as read from the database: its output schema with its keys as written (db/schema-keys.ts). */
export function loadedTemplate(doc: TemplateDoc): TemplateDoc {
  return doc.output_schema ? { ...doc, output_schema: loadedSchema(doc.output_schema) } : doc;
}

export async function findVisibleTemplate(db: Db, ownerId: string, id: string): Promise<TemplateDoc | null> {
  const doc = await templatesCollection(db).findOne({ _id: id, ...visibleTo(ownerId) });
  return doc && loadedTemplate(doc);
}

/** The visible templates among `ids`, keyed by id (one query for a whole workflow). */
export async function findVisibleTemplates(db: Db, ownerId: string, ids: string[]): Promise<Map<string, TemplateDoc>> {
  const docs = await templatesCollection(db)
    .find({ _id: { $in: [...new Set(ids)] }, ...visibleTo(ownerId) })
    .toArray();
  return new Map(docs.map((d) => [d._id, loadedTemplate(d)]));
}

/**
 * The visible templates named one of `names` (exact, case-sensitive), the caller's own first: a workflow step may name
 * its template (`template: "Summarizer"`) so a definition applies on any deployment. A name is unique among one
 * owner's templates, but a system template may share it, and a database from before may still hold duplicates
 * (db/indexes.ts): the caller decides what several matches mean.
 */
export async function findVisibleTemplatesByName(db: Db, ownerId: string, names: string[]): Promise<TemplateDoc[]> {
  if (names.length === 0) return [];
  const docs = await templatesCollection(db)
    .find({ name: { $in: [...new Set(names)] }, ...visibleTo(ownerId) })
    .sort({ created_at: 1, _id: 1 })
    .toArray();
  return docs.map(loadedTemplate);
}

/** The id of the owner's own template named `name` (exact), or null: names are unique per owner. */
export async function findOwnTemplateIdByName(db: Db, ownerId: string, name: string): Promise<string | null> {
  const doc = await templatesCollection(db).findOne(
    { owner_id: ownerId, name },
    { projection: { _id: 1 }, sort: { created_at: 1, _id: 1 } },
  );
  return doc?._id ?? null;
}

/** Names one owner gave to several templates: stored before names were unique (db/indexes.ts reports them). */
export interface DuplicateTemplateName {
  owner_id: string;
  name: string;
  ids: string[];
}

/** Every (owner, name) held by more than one user template; a scan, run only when the name index cannot be built. */
export async function findDuplicateTemplateNames(db: Db): Promise<DuplicateTemplateName[]> {
  const groups = await templatesCollection(db)
    .aggregate<{ _id: { owner_id: string; name: string }; ids: string[] }>([
      { $match: { system: false } },
      { $group: { _id: { owner_id: '$owner_id', name: '$name' }, ids: { $push: '$_id' }, n: { $sum: 1 } } },
      { $match: { n: { $gt: 1 } } },
    ])
    .toArray();
  return groups
    .map((g) => ({ owner_id: g._id.owner_id, name: g._id.name, ids: [...g.ids].sort() }))
    .sort((a, b) => a.owner_id.localeCompare(b.owner_id) || a.name.localeCompare(b.name));
}

/** Filters of the template list (GET /api/v1/agents). */
export interface TemplateListFilters {
  tag?: string | undefined;
  step_type?: StepType | undefined;
}

/** The list order: system templates (seeded first) then the caller's own, oldest first. */
export const TEMPLATE_ORDER: PageOrder = { sortField: 'created_at', direction: 1 };

/** One page of what `ownerId` may see, optionally narrowed by tag and step type. */
export async function listVisibleTemplates(
  db: Db,
  ownerId: string,
  filters: TemplateListFilters,
  page: PageRequest,
): Promise<Page<TemplateDoc>> {
  // The same set as visibleTo() (system templates are exactly those with owner_id null), written so that one index,
  // by_owner_created, serves both the filter and the (created_at, _id) order.
  const filter: Filter<TemplateDoc> = { owner_id: { $in: [null, ownerId] } };
  if (filters.tag !== undefined) filter.tags = filters.tag;
  if (filters.step_type !== undefined) filter.step_type = filters.step_type;
  const found = await findPage(templatesCollection(db), filter, page, TEMPLATE_ORDER);
  return { ...found, items: found.items.map(loadedTemplate) };
}

/** The fields a user sets on their own template (everything but identity, ownership and timestamps). */
export type TemplateContent = Omit<
  TemplateDoc,
  '_id' | 'owner_id' | 'system' | 'system_key' | 'created_at' | 'updated_at'
>;

/** The content fields of a stored template. */
export function templateContent(doc: TemplateDoc): TemplateContent {
  const { _id, owner_id, system, system_key, created_at, updated_at, ...content } = doc;
  void [_id, owner_id, system, system_key, created_at, updated_at];
  return content;
}

/** Stores a new template owned by `ownerId`. */
export async function createTemplate(db: Db, ownerId: string, content: TemplateContent): Promise<TemplateDoc> {
  const now = new Date();
  const doc: TemplateDoc = {
    _id: newId('tpl'),
    owner_id: ownerId,
    system: false,
    ...content,
    created_at: now,
    updated_at: now,
  };
  await templatesCollection(db).insertOne({ ...doc, output_schema: storedSchema(doc.output_schema) });
  await bumpTemplateVersion(db, ownerId);
  return doc;
}

/**
 * Sets the given fields of one of the owner's own templates (never a system template: the filter says so) and
 * returns the result, or null when there is no such template. Only the changed fields are written, so two
 * concurrent changes of different fields both survive.
 */
export async function updateOwnTemplate(
  db: Db,
  ownerId: string,
  id: string,
  changes: Partial<TemplateContent>,
): Promise<TemplateDoc | null> {
  const stored =
    'output_schema' in changes ? { ...changes, output_schema: storedSchema(changes.output_schema) } : changes;
  const doc = await templatesCollection(db).findOneAndUpdate(
    { _id: id, owner_id: ownerId, system: false },
    { $set: { ...stored, updated_at: new Date() } },
    { returnDocument: 'after' },
  );
  if (doc) await bumpTemplateVersion(db, ownerId);
  return doc && loadedTemplate(doc);
}

/** Deletes one of the owner's own templates; false when there is no such template. */
export async function deleteOwnTemplate(db: Db, ownerId: string, id: string): Promise<boolean> {
  const res = await templatesCollection(db).deleteOne({ _id: id, owner_id: ownerId, system: false });
  if (res.deletedCount === 1) await bumpTemplateVersion(db, ownerId);
  return res.deletedCount === 1;
}
