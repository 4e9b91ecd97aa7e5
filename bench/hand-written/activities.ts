/**
 * The hand-written service's activities: the same GET a Stepwise `http_request` step with only a URL makes (with an
 * Idempotency-Key), and the run's outcome written to its record (run as a local activity).
 */
import type { Db } from 'mongodb';
import { runs } from './store';

export function createActivities(db: Db) {
  return {
    async request(url: string, idempotencyKey: string): Promise<unknown> {
      const res = await fetch(url, { headers: { 'Idempotency-Key': idempotencyKey } });
      return { status: res.status, body: await res.json() };
    },

    async recordOutcome(runId: string, outcome: { output: unknown } | { error: string }): Promise<void> {
      await runs(db).updateOne(
        { _id: runId },
        {
          $set:
            'error' in outcome
              ? { status: 'failed', error: outcome.error, ended_at: new Date() }
              : { status: 'completed', output: outcome.output, ended_at: new Date() },
        },
      );
    },
  };
}

export type HandWrittenActivities = ReturnType<typeof createActivities>;
