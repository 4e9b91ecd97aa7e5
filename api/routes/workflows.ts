/**
 * Workflows and their runs: `/api/v1/workflows` (list, create, read, update, delete), a workflow's runs (start, list)
 * and a run's status, executions, cancel, approval and rerun. The run routes under `/workflows/runs/…` are
 * registered before `/workflows/:id…`, so `runs` is never taken for a workflow id.
 * Handlers are thin: validate → owner-scoped repository or command → presenter.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { baseUrlOf, userId } from '../http/caller';
import { disableWorkflowHooks } from '../../db/hooks';
import { deleteWorkflowSchedules } from '../commands/schedules';
import { isId, newId } from '../../db/ids';
import { runsCollection, STATUS_PROJECTION } from '../../db/runs';
import {
  deleteWorkflow,
  insertWorkflow,
  loadedWorkflow,
  updateWorkflow,
  workflowsCollection,
  type WorkflowDoc,
} from '../../db/workflows';
import { checkWorkflowBudget } from '../commands/budget';
import { checkCallbackUrl } from '../commands/callback-url';
import { checkWorkflow } from '../commands/check-workflow';
import { resolveTemplateNames } from '../commands/template-names';
import { approveStep, cancelRun } from '../commands/run-control';
import { buildRunView } from '../../shared/run-view/build';
import { getRunStatus } from '../commands/run-status/read';
import { findRepeatedStep } from '../commands/run-status/executions';
import { stepExecutionsCollection } from '../../db/step-executions';
import { withWarnings } from '../commands/model-warnings';
import { rerunRun } from '../commands/rerun';
import { startRun } from '../commands/start-run';
import { respond } from '../http/envelope';
import { NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { idempotencyKey } from '../http/idempotency-key';
import { dryRunQuery, isDryRun, withoutId } from '../schemas/dry-run';
import { pageQuery, paginate } from '../http/pagination';
import { presentWorkflow } from '../presenters/workflow';
import { presentExecution, presentRunSummary } from '../../shared/run-view/view';
import { authenticated, ownWorkflow } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import '../http/state';
import {
  approveBody,
  createWorkflowBody,
  rerunBody,
  runIdParams,
  startRunBody,
  statusQuery,
  stepExecutionsParams,
  updateWorkflowBody,
  workflowIdParams,
} from '../schemas/workflows';

export const listWorkflows = validate({ query: pageQuery });
export const createWorkflow = validate({ query: dryRunQuery, body: createWorkflowBody });
export const getWorkflow = validate({ params: workflowIdParams });
export const patchWorkflow = validate({ params: workflowIdParams, query: dryRunQuery, body: updateWorkflowBody });
export const removeWorkflow = validate({ params: workflowIdParams });
export const listRuns = validate({ params: workflowIdParams, query: pageQuery });
export const startRunRoute = validate({ params: workflowIdParams, body: startRunBody });
export const runStatus = validate({ params: runIdParams, query: statusQuery });
export const listExecutionsRoute = validate({ params: stepExecutionsParams, query: pageQuery });
export const cancelRunRoute = validate({ params: runIdParams });
export const approveRoute = validate({ params: runIdParams, body: approveBody });
export const rerunRoute = validate({ params: runIdParams, body: rerunBody });

function workflowIdOr404(id: string): string {
  if (!isId('wf', id)) throw new NotFoundError(`workflow ${id} not found`);
  return id;
}

/** The run id of the path, also put on the request's log lines. */
function runIdOr404(ctx: Context, id: string): string {
  if (!isId('run', id)) throw new NotFoundError(`run ${id} not found`);
  ctx.state.log = ctx.state.log.child({ run_id: id });
  return id;
}

export function workflowRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);

  // --- runs (fixed word: registered first) ---
  router.get('/workflows/runs/:runId/status', ...auth, runStatus, async (ctx) => {
    const { params, query } = runStatus.input(ctx);
    const run = await getRunStatus(deps, userId(ctx), runIdOr404(ctx, params.runId), {
      waitSeconds: query.wait,
      until: query.until,
    });
    respond(ctx, 200, await buildRunView(deps.db, run, deps.config));
  });

  router.get('/workflows/runs/:runId/steps/:stepId/executions', ...auth, listExecutionsRoute, async (ctx) => {
    const { params, query } = listExecutionsRoute.input(ctx);
    const runId = runIdOr404(ctx, params.runId);
    await findRepeatedStep(deps.db, userId(ctx), runId, params.stepId);
    const docs = await paginate(ctx, {
      collection: stepExecutionsCollection(deps.db),
      filter: { run_id: runId, step_id: params.stepId },
      page: query,
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentExecution));
  });

  router.post('/workflows/runs/:runId/cancel', ...auth, cancelRunRoute, async (ctx) => {
    const { params } = cancelRunRoute.input(ctx);
    const { run_id } = await cancelRun(deps, userId(ctx), runIdOr404(ctx, params.runId));
    respond(ctx, 202, { run_id, cancel_requested: true });
  });

  router.post('/workflows/runs/:runId/approve', ...auth, approveRoute, async (ctx) => {
    const { params, body } = approveRoute.input(ctx);
    const result = await approveStep(deps, {
      ownerId: userId(ctx),
      runId: runIdOr404(ctx, params.runId),
      stepId: body.step_id,
      approved: body.approved,
      comment: body.comment ?? null,
    });
    respond(ctx, 200, { run_id: params.runId, ...result });
  });

  router.post('/workflows/runs/:runId/rerun', ...auth, rerunRoute, async (ctx) => {
    const { params, body } = rerunRoute.input(ctx);
    const started = await rerunRun(deps, {
      ownerId: userId(ctx),
      runId: runIdOr404(ctx, params.runId),
      fromStep: body.from_step,
      overrides: body.overrides,
      idempotencyKey: idempotencyKey(ctx),
      baseUrl: baseUrlOf(deps.config.PUBLIC_URL, ctx),
      chargeRunStart: () => deps.limits.runStarts(ctx),
    });
    ctx.state.log.info({ rerun_run_id: started.run_id, from_step: started.from_step }, 'rerun started');
    ctx.set('Location', started.status_url);
    respond(ctx, 202, started);
  });

  // --- workflows ---
  router.get('/workflows', ...auth, listWorkflows, async (ctx) => {
    const { query } = listWorkflows.input(ctx);
    const docs = await paginate(ctx, {
      collection: workflowsCollection(deps.db),
      filter: { owner_id: userId(ctx) },
      page: query,
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(
      ctx,
      200,
      docs.map((doc) => presentWorkflow(loadedWorkflow(doc))),
    );
  });

  router.post('/workflows', ...auth, createWorkflow, async (ctx) => {
    const { body, query } = createWorkflow.input(ctx);
    const owner = userId(ctx);
    const now = new Date();
    const doc: WorkflowDoc = {
      _id: newId('wf'),
      owner_id: owner,
      name: body.name,
      description: body.description ?? null,
      steps: await resolveTemplateNames(deps.db, owner, body.steps),
      config: body.config ?? {},
      created_at: now,
      updated_at: now,
    };
    checkWorkflowBudget(deps.config, doc.config);
    checkCallbackUrl(doc.config.callback_url, deps.config.HTTP_ALLOWED_HOSTS, 'config.callback_url');
    const warnings = await checkWorkflow(deps.db, owner, doc, deps.config);
    if (isDryRun(query)) return respond(ctx, 200, withWarnings(withoutId(presentWorkflow(doc)), warnings));
    await insertWorkflow(deps.db, doc);
    ctx.set('Location', `/api/v1/workflows/${doc._id}`);
    respond(ctx, 201, withWarnings(presentWorkflow(doc), warnings));
  });

  router.get('/workflows/:id', ...auth, getWorkflow, async (ctx) => {
    const { params } = getWorkflow.input(ctx);
    respond(ctx, 200, presentWorkflow(await ownWorkflow(deps, ctx, params.id)));
  });

  router.patch('/workflows/:id', ...auth, patchWorkflow, async (ctx) => {
    const { params, query, body } = patchWorkflow.input(ctx);
    const owner = userId(ctx);
    const current = await ownWorkflow(deps, ctx, params.id);
    const next = {
      name: body.name ?? current.name,
      description: body.description !== undefined ? body.description : current.description,
      steps: body.steps ? await resolveTemplateNames(deps.db, owner, body.steps) : current.steps,
      config: body.config ?? current.config,
    };
    checkWorkflowBudget(deps.config, next.config);
    if (body.config) checkCallbackUrl(body.config.callback_url, deps.config.HTTP_ALLOWED_HOSTS, 'config.callback_url');
    const warnings = await checkWorkflow(deps.db, owner, { ...next, id: current._id }, deps.config);
    if (isDryRun(query)) return respond(ctx, 200, withWarnings(presentWorkflow({ ...current, ...next }), warnings));
    const updated = await updateWorkflow(deps.db, owner, params.id, next);
    if (!updated) throw new NotFoundError(`workflow ${params.id} not found`);
    respond(ctx, 200, withWarnings(presentWorkflow(updated), warnings));
  });

  router.delete('/workflows/:id', ...auth, removeWorkflow, async (ctx) => {
    const { params } = removeWorkflow.input(ctx);
    const id = workflowIdOr404(params.id);
    // Its schedules go first (a Temporal outage then leaves everything as it was: 503, nothing half-deleted).
    await deleteWorkflowSchedules(deps, userId(ctx), id);
    const deleted = await deleteWorkflow(deps.db, userId(ctx), id);
    if (!deleted) throw new NotFoundError(`workflow ${params.id} not found`);
    // Its inbound webhooks stop answering (a 404, as for any unknown hook).
    await disableWorkflowHooks(deps.db, userId(ctx), params.id);
    respond(ctx, 200, { id: params.id, deleted: true });
  });

  router.get('/workflows/:id/runs', ...auth, listRuns, async (ctx) => {
    const { params, query } = listRuns.input(ctx);
    const owner = userId(ctx);
    const workflow = await ownWorkflow(deps, ctx, params.id);
    const docs = await paginate(ctx, {
      collection: runsCollection(deps.db),
      filter: { owner_id: owner, workflow_id: workflow._id },
      page: query,
      order: { sortField: 'created_at', direction: -1 },
      projection: STATUS_PROJECTION,
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentRunSummary));
  });

  router.post('/workflows/:id/run', ...auth, startRunRoute, async (ctx) => {
    const { params, body } = startRunRoute.input(ctx);
    const key = idempotencyKey(ctx);
    const started = await startRun(deps, {
      ownerId: userId(ctx),
      workflowId: workflowIdOr404(params.id),
      input: body.input,
      ...(body.callback_url !== undefined ? { callbackUrl: body.callback_url } : {}),
      idempotencyKey: key,
      baseUrl: baseUrlOf(deps.config.PUBLIC_URL, ctx),
      chargeRunStart: () => deps.limits.runStarts(ctx),
    });
    ctx.state.log = ctx.state.log.child({ run_id: started.run_id });
    ctx.state.log.info({ workflow_id: started.workflow_id }, 'run started');
    ctx.set('Location', started.status_url);
    respond(ctx, 202, started);
  });

  return router;
}
