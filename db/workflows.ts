/** Workflows: owned by one user; every query filters by owner, so another user's id behaves like an unknown one. */
import type { Db } from 'mongodb';
import type { JsonObject, JsonValue } from '../domain/json';
import type { EgressSettings } from '../domain/egress';
import type { McpToolSelection } from '../domain/mcp';
import type { RetrySettings } from '../domain/run';
import type { OnError, Trigger } from '../domain/graph';
import { loadedSchema, storedSchema } from './schema-keys';

export interface WorkflowStepDoc {
  id: string;
  /** Exactly one of template_id and workflow_id (a sub-workflow). */
  template_id?: string;
  /**
   * The template's name as the definition wrote it (`template`), kept so an export gives it back; template_id holds
   * what it named when the workflow was written (api/commands/template-names.ts).
   */
  template?: string;
  workflow_id?: string;
  depends_on?: string[];
  when?: string;
  trigger?: Trigger;
  on_error?: OnError;
  map?: { over: string; concurrency?: number; on_item_error?: OnError };
  loop?: { until: string; max_iterations: number };
  prompt?: string;
  tools?: string[];
  tasks?: string[];
  model?: string;
  /** Agent steps: override the template's turn limit and answer schema. */
  max_turns?: number;
  output_schema?: JsonObject;
  /** Agent steps: each field set here replaces the template's. */
  egress?: EgressSettings;
  /** Agent steps: overrides the template's mcp_tools. */
  mcp_tools?: McpToolSelection[];
  /** Agent steps: the thread the step takes a turn in (decision 0603), e.g. `{{input.thread_id}}`; rendered per run. */
  thread?: string;
  config?: JsonObject;
  input?: JsonValue;
  retry?: RetrySettings;
  timeout_seconds?: number;
}

export interface WorkflowConfigDoc {
  input_schema?: JsonObject;
  timeout_seconds?: number;
  retry?: RetrySettings;
  step_timeout_seconds?: number;
  /** Lowers the server's run budget (RUN_MAX_TOKENS, RUN_MAX_MODEL_CALLS) for this workflow's runs. */
  budget?: { max_tokens?: number; max_model_calls?: number };
  /** Completion webhook of every run (a run start's own callback_url replaces it). */
  callback_url?: string;
  /** `listed: false` leaves the workflow out of the /mcp tool list (api/mcp/workflow-tools.ts). */
  mcp?: { listed?: boolean };
}

export interface WorkflowDoc {
  _id: string;
  owner_id: string;
  name: string;
  description: string | null;
  steps: WorkflowStepDoc[];
  config: WorkflowConfigDoc;
  created_at: Date;
  updated_at: Date;
}

export function workflowsCollection(db: Db) {
  return db.collection<WorkflowDoc>('workflows');
}

type Definition = Pick<WorkflowDoc, 'steps' | 'config'>;

/** The schemas of a definition (input schema, steps' output schemas) with their keys mapped (db/schema-keys.ts). */
function mapSchemas<T extends Definition>(doc: T, map: <S extends JsonObject | undefined>(s: S) => S): T {
  return {
    ...doc,
    config: doc.config.input_schema ? { ...doc.config, input_schema: map(doc.config.input_schema) } : doc.config,
    steps: doc.steps.map((s) => (s.output_schema ? { ...s, output_schema: map(s.output_schema) } : s)),
  };
}

/** A workflow as read from the database, its schemas as the user wrote them (for lists read elsewhere, too). */
export function loadedWorkflow(doc: WorkflowDoc): WorkflowDoc {
  return mapSchemas(doc, loadedSchema);
}

export async function insertWorkflow(db: Db, doc: WorkflowDoc): Promise<void> {
  await workflowsCollection(db).insertOne(mapSchemas(doc, storedSchema));
}

export async function findWorkflow(db: Db, ownerId: string, id: string): Promise<WorkflowDoc | null> {
  const doc = await workflowsCollection(db).findOne({ _id: id, owner_id: ownerId });
  return doc && loadedWorkflow(doc);
}

/** The owner's workflows among `ids` (others' and unknown ids are left out). */
export async function findWorkflows(db: Db, ownerId: string, ids: string[]): Promise<WorkflowDoc[]> {
  if (ids.length === 0) return [];
  const docs = await workflowsCollection(db)
    .find({ _id: { $in: ids }, owner_id: ownerId })
    .toArray();
  return docs.map(loadedWorkflow);
}

/** Replaces the definition fields; returns the stored document, or null when the owner has no such workflow. */
export async function updateWorkflow(
  db: Db,
  ownerId: string,
  id: string,
  fields: Pick<WorkflowDoc, 'name' | 'description' | 'steps' | 'config'>,
): Promise<WorkflowDoc | null> {
  const doc = await workflowsCollection(db).findOneAndUpdate(
    { _id: id, owner_id: ownerId },
    { $set: { ...mapSchemas(fields, storedSchema), updated_at: new Date() } },
    { returnDocument: 'after' },
  );
  return doc && loadedWorkflow(doc);
}

/** Deletes the workflow (its runs stay readable by run id: they carry their own snapshot). */
export async function deleteWorkflow(db: Db, ownerId: string, id: string): Promise<boolean> {
  const res = await workflowsCollection(db).deleteOne({ _id: id, owner_id: ownerId });
  return res.deletedCount === 1;
}
