/**
 * Creating and cancelling experiments (issue #47 item 2). Creation checks everything that can be checked before a
 * run exists — the dataset version (pinned here), the workflow, the overrides against its steps (a step it does not
 * have is a 400, by the rule reruns use), the scorers (compiled: a bad one is a 400 naming its path) and every item's
 * input against the workflow's input_schema (the first refused item is named with the schema's message); in mode
 * `replay` also each item's recorded run and that replaying it re-sends no side effect (shared/runs/replay.ts) —
 * then starts the experiment workflow (workflow id = experiment id).
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { z } from 'zod';
import type { Config } from '../../config';
import { countItemsAt, itemsCursor } from '../../db/dataset-items';
import { findOwnDataset } from '../../db/datasets';
import { experimentsCollection, insertExperiment, type ExperimentDoc } from '../../db/experiments';
import { isId, newId } from '../../db/ids';
import { findWorkflowWithTemplates } from '../../db/workflow-with-templates';
import { compileScorers } from '../../domain/evals';
import {
  DEFAULT_REPLAY_TOOL_CALLS,
  EXPERIMENT_WORKFLOW_TYPE,
  TERMINAL_EXPERIMENT_STATUSES,
} from '../../domain/experiment';
import type { JsonObject } from '../../domain/json';
import { overridesProblem, withOverrides } from '../../shared/runs/overrides';
import { replaySource } from '../../shared/runs/replay';
import { buildSnapshot } from '../../shared/runs/snapshot';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '../http/errors';
import { isTemporalUnavailable } from '../http/infra-errors';
import type { InputValidators } from './input-validators';
import { DEFAULT_CONCURRENCY, MAX_EXPERIMENTS_PER_USER, type createExperimentBody } from '../schemas/experiments';

export interface ExperimentCommandDeps {
  db: Db;
  config: Config;
  temporal: Client;
  inputValidators: InputValidators;
}

type CreateBody = z.output<typeof createExperimentBody>;

export async function createExperiment(
  deps: ExperimentCommandDeps,
  ownerId: string,
  body: CreateBody,
): Promise<ExperimentDoc> {
  const replay = body.mode === 'replay';
  if (body.replay && !replay)
    throw new BadRequestError('replay: only mode "replay" takes these options', 'invalid_field');
  const compiled = compileScorers(body.scorers);
  if (!compiled.ok) {
    throw new BadRequestError(compiled.errors.map((e) => `${e.path}: ${e.message}`).join('; '), 'invalid_scorer');
  }
  const dataset = isId('ds', body.dataset_id) ? await findOwnDataset(deps.db, ownerId, body.dataset_id) : null;
  if (!dataset) throw new NotFoundError(`dataset ${body.dataset_id} not found`);
  const version = body.dataset_version ?? dataset.version;
  if (version > dataset.version) {
    throw new NotFoundError(`dataset ${dataset._id} has no version ${version} (the latest is ${dataset.version})`);
  }
  const found = isId('wf', body.workflow_id)
    ? await findWorkflowWithTemplates(deps.db, ownerId, body.workflow_id)
    : null;
  if (!found) throw new NotFoundError(`workflow ${body.workflow_id} not found`);
  const { workflow, templates } = found;
  const loaded = await loadSnapshotSources(deps.db, ownerId, workflow, deps.config.SUBWORKFLOW_MAX_DEPTH, templates);
  if (!loaded.ok) throw new BadRequestError(`workflow_id: ${loaded.problem}`, 'workflow_invalid');
  // The steps as a run would have them (agent or not, after templates are resolved): what overrides apply to.
  const steps = buildSnapshot({
    runId: 'run_experimentcheck',
    workflow,
    sources: loaded.sources,
    input: {},
    config: deps.config,
    now: new Date(),
  }).steps;
  const wrong = overridesProblem(steps, body.overrides, 'the workflow');
  if (wrong) throw new BadRequestError(wrong, 'invalid_field');
  const target = withOverrides(steps, body.overrides);
  const items = await countItemsAt(deps.db, dataset._id, version);
  if (items === 0) throw new BadRequestError(`dataset_id: version ${version} of the dataset has no items`);
  for await (const row of itemsCursor(deps.db, dataset._id, version)) {
    try {
      deps.inputValidators.check(workflow, JSON.parse(row.input_json) as JsonObject);
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      throw new BadRequestError(
        `item ${row.item_id}: the workflow's input_schema refuses its input: ${err.message}`,
        'invalid_input',
      );
    }
    if (replay) {
      // Each item's record, and that nothing it would run again re-sends a side effect (one read per item).
      const source = await replaySource(deps.db, ownerId, row, target);
      if (!source.ok) throw new BadRequestError(source.problem, 'replay_refused');
    }
  }
  const count = await experimentsCollection(deps.db).countDocuments({ owner_id: ownerId });
  if (count >= MAX_EXPERIMENTS_PER_USER) {
    throw new ConflictError(`you already have ${count} experiments (the limit)`, 'too_many_experiments');
  }
  const now = new Date();
  const id = newId('exp');
  const repetitions = body.repetitions ?? 1;
  const doc: ExperimentDoc = {
    _id: id,
    owner_id: ownerId,
    name: body.name ?? id,
    dataset_id: dataset._id,
    dataset_version: version,
    workflow_id: workflow._id,
    overrides: body.overrides && Object.keys(body.overrides).length > 0 ? body.overrides : null,
    mode: replay ? 'replay' : 'live',
    replay: replay ? { tool_calls: body.replay?.tool_calls ?? DEFAULT_REPLAY_TOOL_CALLS } : null,
    scorers: body.scorers,
    concurrency: body.concurrency ?? DEFAULT_CONCURRENCY,
    repetitions,
    budget: {
      ...(body.budget?.max_tokens !== undefined ? { max_tokens: body.budget.max_tokens } : {}),
      ...(body.budget?.max_model_calls !== undefined ? { max_model_calls: body.budget.max_model_calls } : {}),
    },
    status: 'queued',
    total: items * repetitions,
    done: 0,
    spend: { tokens: 0, model_calls: 0 },
    message: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  await insertExperiment(deps.db, doc);
  try {
    await deps.temporal.workflow.start(EXPERIMENT_WORKFLOW_TYPE, {
      workflowId: id,
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ experiment_id: id }],
    });
  } catch (err) {
    await experimentsCollection(deps.db).deleteOne({ _id: id });
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new ConflictError('experiment id taken; retry');
    throw err;
  }
  return doc;
}

/** Cancels the experiment's workflow (which cancels its runs in flight and records `cancelled`); 409 once ended. */
export async function cancelExperiment(deps: ExperimentCommandDeps, doc: ExperimentDoc): Promise<void> {
  if (TERMINAL_EXPERIMENT_STATUSES.includes(doc.status)) {
    throw new ConflictError(`experiment ${doc._id} has ended (${doc.status})`, 'experiment_ended');
  }
  try {
    await deps.temporal.workflow.getHandle(doc._id).cancel();
  } catch (err) {
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    throw err;
  }
}
