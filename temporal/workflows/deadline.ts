/**
 * The run's deadline (`config.timeout_seconds`) as a workflow timer. Temporal's execution timeout closes a run
 * without running workflow code again, so the run could neither record its `timed_out` outcome nor start its
 * completion webhook; a timer the workflow sees lets it end like any other ending. The execution timeout stays as a
 * backstop a grace period later (shared/runs/start-execution.ts), for runs whose code never runs.
 * Only a snapshot with `deadline_at` has one.
 */
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

export type WithinDeadline<T> = { expired: false; result: T } | { expired: true };

/**
 * Runs `work` in a scope of its own against a timer to `deadline` (ISO-8601). When the timer fires first the work's
 * scope is cancelled and the answer is `expired` once the work has stopped; work that finishes first cancels the timer.
 * A cancellation of the run itself reaches both scopes as before.
 */
export async function withinDeadline<T>(
  deadline: string | undefined,
  work: () => Promise<T>,
): Promise<WithinDeadline<T>> {
  if (deadline === undefined) return { expired: false, result: await work() };
  let expired = false;
  const workScope = new CancellationScope();
  const timerScope = new CancellationScope();
  // Workflow time is deterministic; a deadline already passed (a late start) still fires through a timer.
  const ms = Math.max(1, Date.parse(deadline) - Date.now());
  void timerScope
    .run(() => sleep(ms))
    .then(
      () => {
        expired = true;
        workScope.cancel();
      },
      () => undefined, // the timer was cancelled: the work ended first, or the run is being cancelled
    );
  try {
    const result = await workScope.run(work);
    return expired ? { expired: true } : { expired: false, result };
  } catch (err) {
    if (expired && isCancellation(err)) return { expired: true };
    throw err;
  } finally {
    timerScope.cancel();
  }
}
