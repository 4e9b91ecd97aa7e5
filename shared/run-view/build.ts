/**
 * A run's status body from storage: the reads (./outputs.ts, ./reads.ts) then the presenter (./view.ts). The API's
 * status read and the worker's webhook body both build the view through here, so the webhook's `data` is exactly what
 * `GET /api/v1/workflows/runs/:runId/status` answers.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { resolveOutputs } from './outputs';
import { readRunExecutions, readRunWebhooks } from './reads';
import { EXECUTIONS_SHOWN, presentRun, type PresentableRun, type RunView } from './view';

export async function buildRunView(
  db: Db,
  run: PresentableRun,
  config: Pick<Config, 'TEMPORAL_UI_URL'>,
  opts: { resolveLarge?: boolean } = {},
): Promise<RunView> {
  const [outputs, executions, webhooks] = await Promise.all([
    resolveOutputs(db, run, opts),
    readRunExecutions(db, run, EXECUTIONS_SHOWN),
    readRunWebhooks(db, run),
  ]);
  return presentRun(run, outputs, config, executions, webhooks);
}
