/**
 * The reads behind a run's status body besides the run document: the first page of each map or loop step's
 * executions, and — once the run has ended — its webhook deliveries. Plain documents out; ./view.ts shapes them.
 */
import type { Db } from 'mongodb';
import { isTerminal, type RunDoc } from '../../db/runs';
import { readExecutions, type ExecutionCounts, type StepExecutionDoc } from '../../db/step-executions';
import { findRunDeliveries, type WebhookDeliveryDoc } from '../../db/webhook-deliveries';

/** A map or loop step's first `shown` executions and its counts, by step id; runs without either cost no read. */
export async function readRunExecutions(
  db: Db,
  run: Pick<RunDoc, '_id' | 'steps'>,
  shown: number,
): Promise<Map<string, { shown: StepExecutionDoc[]; counts: ExecutionCounts }>> {
  const repeated = run.steps.filter((s) => s.repeat).map((s) => s.id);
  if (repeated.length === 0) return new Map();
  return readExecutions(db, run._id, repeated, shown);
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
