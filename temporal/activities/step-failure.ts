/**
 * What a step's activity does when an attempt fails, shared by action steps and agent model calls: decide the
 * failure once (toActivityError), and record it in the run projection — as the step's final error when Temporal will
 * not retry, as a failed attempt otherwise. A projection write that fails is logged, never thrown over the failure.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { BlobMissingError, BlobPathError, OutputTooLargeError } from '../../db/blobs';
import { markStepFailed } from '../../db/step-states';
import { toActivityError } from '../failures';
import type { WorkerMetrics } from '../metrics';

/** Errors of the large-output store: retrying cannot help. */
function storageFailure(err: unknown): unknown {
  if (err instanceof OutputTooLargeError) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof BlobMissingError || err instanceof BlobPathError) {
    return ApplicationFailure.nonRetryable(err.message, 'missing_reference');
  }
  return err;
}

/** Classifies `err`, records the failed attempt, and returns the error the activity must throw. */
export async function failStepAttempt(
  deps: { db: Db; log: Logger; metrics: WorkerMetrics },
  req: { run_id: string; step_id: string; max_attempts: number },
  attempt: number,
  err: unknown,
): Promise<unknown> {
  const failure = toActivityError(storageFailure(err));
  if (failure instanceof ApplicationFailure) {
    const final = failure.nonRetryable || attempt >= req.max_attempts;
    const reason = failure.type ?? 'internal';
    deps.metrics.stepFailure(reason, final);
    if (reason === 'url_refused') deps.metrics.ssrfRefusal('action');
    await markStepFailed(
      deps.db,
      req.run_id,
      req.step_id,
      { reason, message: failure.message, ...(failure.type ? { code: failure.type } : {}) },
      { final, attempt },
    ).catch((e: unknown) => deps.log.warn({ err: e }, 'could not record step failure'));
  }
  return failure;
}
