/**
 * The reads behind a run view: resolved outputs, the first page of each map or loop step's executions, and — once the
 * run has ended — its webhook deliveries. The API's status endpoint and the worker's webhook body both build the
 * view through here, so the webhook's `data` is exactly what endpoint 8 answers.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { isTerminal, type RunDoc } from '../runs';
import { readExecutions } from '../step-executions';
import { findRunDeliveries, type WebhookDeliveryDoc } from '../webhook-deliveries';
import { resolveOutputs } from './outputs';
import { EXECUTIONS_SHOWN, presentRun, type PresentableExecutions, type RunView } from './view';

type StoredRun = Omit<RunDoc, 'snapshot'>;

export async function readRunExecutions(
  db: Db,
  run: Pick<RunDoc, '_id' | 'steps'>,
): Promise<Map<string, PresentableExecutions>> {
  const repeated = run.steps.filter((s) => s.repeat).map((s) => s.id);
  if (repeated.length === 0) return new Map();
  return readExecutions(db, run._id, repeated, EXECUTIONS_SHOWN);
}

/**
 * Deliveries exist only after a run with a callback URL has ended: a running run's status read, and a run's without
 * one, cost no extra query.
 */
export async function readRunWebhooks(
  db: Db,
  run: Pick<RunDoc, '_id' | 'status' | 'webhook'>,
): Promise<WebhookDeliveryDoc[]> {
  return isTerminal(run.status) && run.webhook !== false ? findRunDeliveries(db, run._id) : [];
}

export async function buildRunView(
  db: Db,
  run: StoredRun,
  config: Pick<Config, 'TEMPORAL_UI_URL'>,
  opts: { resolveLarge?: boolean } = {},
): Promise<RunView> {
  const [outputs, executions, webhooks] = await Promise.all([
    resolveOutputs(db, run, opts),
    readRunExecutions(db, run),
    readRunWebhooks(db, run),
  ]);
  return presentRun(run, outputs, config, executions, webhooks);
}
