/** Fixtures for workflow and run tests: templates stored through the repository's collection, workflows via the API. */
import type { Db } from 'mongodb';
import { newId } from '../../db/ids';
import { bumpTemplateVersion } from '../../db/template-versions';
import { templatesCollection, type TemplateDoc } from '../../db/templates';
import { ACTION_TYPES, type ActionType } from '../../domain/action-types';
import type { JsonObject } from '../../domain/json';
import type { TestApi } from './stack';
import type { TestUser } from './users';

export async function insertTemplate(
  db: Db,
  owner: string | null,
  fields: Partial<TemplateDoc> & Pick<TemplateDoc, 'step_type'>,
): Promise<TemplateDoc> {
  const now = new Date();
  const doc: TemplateDoc = {
    _id: newId('tpl'),
    owner_id: owner,
    system: owner === null,
    // Unique per owner, as the name index requires.
    name: `template ${fields.action_type ?? fields.step_type} ${newId('tpl').slice(4, 12)}`,
    default_prompt: 'Do the thing.',
    default_tools: [],
    default_tasks: [],
    tags: [],
    short_description: null,
    action_type: null,
    model: null,
    config: {},
    max_turns: null,
    output_schema: null,
    created_at: now,
    updated_at: now,
    ...fields,
  };
  await templatesCollection(db).insertOne(doc);
  // As the repository's own writes do, so that template lists (api/commands/template-lists.ts) show it at once.
  await bumpTemplateVersion(db, owner);
  return doc;
}

/** One action template of each type, owned by `owner`. */
export async function actionTemplates(db: Db, owner: string): Promise<Record<ActionType, TemplateDoc>> {
  const out: Partial<Record<ActionType, TemplateDoc>> = {};
  for (const type of ACTION_TYPES) {
    // insertTemplate names it uniquely: a test may ask for a second set for the same owner.
    out[type] = await insertTemplate(db, owner, { step_type: 'action', action_type: type });
  }
  return out as Record<ActionType, TemplateDoc>;
}

export async function createWorkflow(api: TestApi, user: TestUser, body: JsonObject): Promise<string> {
  const res = await api.http.post('/api/v1/workflows').set(user.auth).send(body);
  if (res.status !== 201) throw new Error(`create workflow: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { data: { id: string } }).data.id;
}

export async function startRun(api: TestApi, user: TestUser, workflowId: string, input?: JsonObject): Promise<string> {
  const res = await api.http
    .post(`/api/v1/workflows/${workflowId}/run`)
    .set(user.auth)
    .send(input ? { input } : {});
  if (res.status !== 202) throw new Error(`start run: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { data: { run_id: string } }).data.run_id;
}

export interface StatusBody {
  status: string;
  outputs: Record<string, unknown>;
  steps: {
    id: string;
    status: string;
    attempts: number;
    output: unknown;
    error: { reason: string; message: string } | null;
    started_at: string | null;
    completed_at: string | null;
    reused_from_run_id?: string | null;
    input?: unknown;
  }[];
  started_at: string | null;
  completed_at: string | null;
  error: { step_id: string | null; reason: string; message: string; code?: string } | null;
  progress: { stalled: boolean; message: string | null; checked_at?: string | null };
  [key: string]: unknown;
}

/** Polls the status endpoint (long poll) until `until` holds; fails with the last body after `timeoutMs`. */
export async function waitForStatus(
  api: TestApi,
  user: TestUser,
  runId: string,
  until: (s: StatusBody) => boolean,
  timeoutMs = 30_000,
): Promise<StatusBody> {
  const deadline = Date.now() + timeoutMs;
  let last: StatusBody | undefined;
  while (Date.now() < deadline) {
    const res = await api.http.get(`/api/v1/workflows/runs/${runId}/status?wait=2`).set(user.auth);
    if (res.status !== 200) throw new Error(`status: ${res.status} ${JSON.stringify(res.body)}`);
    last = (res.body as { data: StatusBody }).data;
    if (until(last)) return last;
  }
  throw new Error(`run ${runId}: condition not met within ${timeoutMs} ms; last status ${JSON.stringify(last)}`);
}

export const isTerminal = (s: StatusBody) => ['completed', 'failed', 'cancelled', 'timed_out'].includes(s.status);

/**
 * Temporal's own final status of a run (COMPLETED, FAILED, CANCELLED…). The run writes its terminal projection just
 * before its execution closes, so a test that saw the terminal status first waits here for the close.
 */
export async function temporalFinalStatus(api: Pick<TestApi, 'temporal'>, runId: string): Promise<string> {
  const handle = api.temporal.workflow.getHandle(runId);
  await handle.result().catch(() => undefined);
  return (await handle.describe()).status.name;
}
