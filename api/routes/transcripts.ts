/**
 * GET /api/v1/workflows/runs/:runId/steps/:stepId/transcript — what an agent step said and did: the system prompt
 * as sent, every model turn with its tool calls and usage, every tool result, the final answer. Owner only: another
 * user's run, an unknown step and a step that is not an agent step all answer 404.
 */
import Router from '@koa/router';
import { userId } from '../http/caller';
import { findRun } from '../../db/runs';
import { findExecution } from '../../db/step-executions';
import { parseExecutionId } from '../../domain/exec-id';
import { findFinalEntry, getTranscriptEntry, transcriptsCollection } from '../../db/transcripts';
import { respond } from '../http/envelope';
import { NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { paginate } from '../http/pagination';
import { presentTranscript } from '../presenters/transcript';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import { transcriptParams, transcriptQuery } from '../schemas/transcripts';

const show = validate({ params: transcriptParams, query: transcriptQuery });

export function transcriptRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/workflows/runs' });

  router.get('/:runId/steps/:stepId/transcript', ...authenticated(deps), show, async (ctx) => {
    const { params, query } = show.input(ctx);
    const run = await findRun(deps.db, userId(ctx), params.runId);
    // `:stepId` is an execution id: the step, or one item (`ask[3]`) / iteration (`ask#2`) of a map or loop step.
    const exec = parseExecutionId(params.stepId);
    const found = exec && run?.steps.find((s) => s.id === exec.stepId);
    if (!run || !exec || !found || found.kind !== 'agent' || (exec.kind === 'step') !== !found.repeat) {
      throw new NotFoundError(`run ${params.runId} has no agent step ${params.stepId}`);
    }
    const inner =
      exec.kind === 'step'
        ? null
        : await findExecution(deps.db, run._id, exec.stepId, exec.kind === 'item' ? exec.index : exec.iteration);
    if (exec.kind !== 'step' && !inner)
      throw new NotFoundError(`run ${params.runId} has no agent step ${params.stepId}`);
    const step = inner
      ? { ...found, id: params.stepId, status: inner.status, turns: inner.turns, usage: inner.usage }
      : found;
    const [setup, final, entries] = await Promise.all([
      getTranscriptEntry(deps.db, run._id, step.id, 0),
      findFinalEntry(deps.db, run._id, step.id),
      paginate(ctx, {
        collection: transcriptsCollection(deps.db),
        // The setup entry is shown as the view's header fields, not as a conversation entry.
        filter: { run_id: run._id, step_id: step.id, kind: { $ne: 'setup' } },
        page: query,
        baseUrl: deps.config.PUBLIC_URL,
      }),
    ]);
    respond(ctx, 200, presentTranscript({ runId: run._id, step, setup, final, entries }));
  });

  return router;
}
