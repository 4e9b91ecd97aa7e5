/**
 * A thread turn's run snapshot: the thread's agent template with the thread's overrides, as a one-step workflow
 * (step `chat`) built the way every run's snapshot is built (../runs/snapshot.ts) — tools, MCP servers, egress and
 * the budget capped by the server's — plus the step's `thread` reference, so the agent step opens its conversation
 * from the thread. The snapshot carries ids and numbers, never the conversation.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { findVisibleTemplate, type TemplateDoc } from '../../db/templates';
import type { ThreadDoc } from '../../db/threads';
import type { WorkflowDoc, WorkflowStepDoc } from '../../db/workflows';
import type { RunSnapshot } from '../../domain/run';
import { DEFAULT_CONTEXT_TOKENS, THREAD_STEP_ID } from '../../domain/thread';
import { buildSnapshot, type SnapshotConfig } from '../runs/snapshot';
import { loadSnapshotSources } from '../runs/snapshot-sources';

/** A turn that cannot be built (its template deleted, an MCP server gone): the turn fails with this. */
export class TurnUnbuildableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TurnUnbuildableError';
  }
}

/** What a thread's runs are listed under: the thread's title, else its id. */
export function threadRunName(thread: Pick<ThreadDoc, '_id' | 'title'>): string {
  return `thread: ${thread.title ?? thread._id}`;
}

/** The one step of every turn, as a workflow step with the thread's overrides. */
export function turnStep(thread: ThreadDoc, template: TemplateDoc): WorkflowStepDoc {
  const o = thread.overrides;
  return {
    id: THREAD_STEP_ID,
    template_id: template._id,
    input: null,
    ...(o.model !== undefined ? { model: o.model } : {}),
    ...(o.instructions !== undefined ? { prompt: `${template.default_prompt}\n\n${o.instructions}` } : {}),
    ...(o.tools !== undefined ? { tools: o.tools } : {}),
    ...(o.mcp_tools !== undefined ? { mcp_tools: o.mcp_tools } : {}),
  };
}

export async function buildTurnSnapshot(
  deps: { db: Db; config: Config & SnapshotConfig },
  thread: ThreadDoc,
  turn: number,
  runId: string,
  now: Date,
): Promise<RunSnapshot> {
  const template = await findVisibleTemplate(deps.db, thread.owner_id, thread.template_id);
  if (!template || template.step_type !== 'agent') {
    throw new TurnUnbuildableError(`the thread's agent template ${thread.template_id} no longer exists`);
  }
  const budget = thread.overrides.budget;
  const workflow: WorkflowDoc = {
    _id: thread._id,
    owner_id: thread.owner_id,
    name: threadRunName(thread),
    description: null,
    steps: [turnStep(thread, template)],
    config: {
      budget: {
        ...(budget?.turn_max_tokens !== undefined ? { max_tokens: budget.turn_max_tokens } : {}),
        ...(budget?.turn_max_model_calls !== undefined ? { max_model_calls: budget.turn_max_model_calls } : {}),
      },
    },
    created_at: thread.created_at,
    updated_at: thread.updated_at,
  };
  const loaded = await loadSnapshotSources(
    deps.db,
    thread.owner_id,
    workflow,
    deps.config.SUBWORKFLOW_MAX_DEPTH,
    new Map([[template._id, template]]),
  );
  if (!loaded.ok) throw new TurnUnbuildableError(loaded.problem.replace('the workflow', 'the thread'));
  const snapshot = buildSnapshot({ runId, workflow, sources: loaded.sources, input: {}, config: deps.config, now });
  const contextTokens = template.context_tokens ?? DEFAULT_CONTEXT_TOKENS;
  return {
    ...snapshot,
    steps: snapshot.steps.map((s) =>
      s.kind === 'agent'
        ? {
            ...s,
            thread: {
              id: thread._id,
              turn,
              context_tokens: contextTokens,
              ...(thread.summarized_to ? { after_turn: thread.summarized_to } : {}),
            },
          }
        : s,
    ),
  };
}
