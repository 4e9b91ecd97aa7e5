/**
 * The one way workflow code makes local activities: through a proxy whose calls are never cancelled.
 *
 * Why: a local activity runs inside the workflow task, and its result reaches core before it reaches the workflow
 * (the resolution waits for the next activation). A cancellation issued in between — a map item failing, a branch
 * failing, the run's deadline or its cancellation, while another branch's projection write has just finished —
 * sends core `RequestCancelLocalActivity` for an activity its state machine already holds as resolved
 * (`MarkerCommandCreated`), which core 1.24 refuses as "[TMPRL1100] Nondeterminism error: Invalid transition in state
 * machine": the workflow task fails on every attempt and the run hangs (issue 44, item 3). The workflow cannot know
 * that core has the result, so it never asks to cancel one: each call runs in a non-cancellable scope, and a
 * cancellation that came meanwhile is thrown once the call has finished, where the activity would have thrown it.
 * Local activities are short bookkeeping writes and pure evaluations bounded by their own timeouts, so a
 * cancellation waits at most for one of them.
 */
import {
  CancellationScope,
  proxyLocalActivities,
  type ActivityInterfaceFor,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities';

/** Like proxyLocalActivities, but no call is ever cancelled (see above). */
export function uncancelledLocalActivities(options: LocalActivityOptions): ActivityInterfaceFor<Activities> {
  const proxy = proxyLocalActivities<Activities>(options);
  return new Proxy(proxy, {
    get(target, name, receiver) {
      const call = Reflect.get(target, name, receiver) as unknown;
      if (typeof call !== 'function') return call;
      return (...args: unknown[]) => uncancelled(() => (call as (...a: unknown[]) => Promise<unknown>)(...args));
    },
  });
}

async function uncancelled<T>(call: () => Promise<T>): Promise<T> {
  const scope = CancellationScope.current();
  // Already cancelled: nothing is scheduled, as with any activity.
  if (scope.consideredCancelled) await scope.cancelRequested;
  const result = await CancellationScope.nonCancellable(call);
  // The caller's scope was cancelled while the call ran: the cancellation surfaces here, as it would have from it.
  if (scope.consideredCancelled) await scope.cancelRequested;
  return result;
}
