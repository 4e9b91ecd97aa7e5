/**
 * Sub-workflows spend their top-level run's budget. The top-level run holds the one count (its RunSpend); a
 * sub-workflow's run reserves each model call there before making it, and settles it afterwards — by signals,
 * workflow to workflow, so both sides are in Temporal's histories: a crash on either side cannot lose or repeat a
 * reservation, and reservations are idempotent by the call's key (`<run id>/<execution>/<turn>`). A grandchild
 * reserves at the top-level run directly (RunSnapshot.budget_root), not through its parent.
 *
 * The sub-workflow's run checks its own budget too (a slice: what its parent had left when it started); that only
 * ever refuses earlier. A reservation granted to a run cancelled before its answer arrived stays taken: the budget
 * errs towards fewer calls, never more.
 */
import { CancellationScope, condition, getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';
import type { RunSpend, SharedBudget } from '../../domain/agent';
import { budgetGrantSignal, budgetReserveSignal, budgetSettleSignal } from '../../domain/messages';
import { budgetRefusal } from './budget';

/** In every run: answers the reservations of the sub-workflow runs below it from the run's own spend. */
export function serveSharedBudget(spend: RunSpend): void {
  const ledger = new Map<string, { refused: string | null; settled: boolean }>();
  setHandler(budgetReserveSignal, ({ key, reply_to }) => {
    let entry = ledger.get(key);
    if (!entry) {
      const refused = budgetRefusal(spend);
      if (refused === null) spend.model_calls += 1;
      entry = { refused, settled: false };
      ledger.set(key, entry);
    }
    // The asking run may have ended meanwhile (cancelled): then nobody waits for the answer.
    void getExternalWorkflowHandle(reply_to)
      .signal(budgetGrantSignal, { key, refused: entry.refused })
      .catch(() => undefined);
  });
  setHandler(budgetSettleSignal, ({ key, tokens, released }) => {
    const entry = ledger.get(key);
    if (!entry || entry.refused !== null || entry.settled) return;
    entry.settled = true;
    spend.tokens += tokens;
    if (released) spend.model_calls -= 1;
  });
}

/** In a sub-workflow's run: reserves and settles its calls at the top-level run `rootRunId`. */
export function shareBudgetWith(rootRunId: string, ownRunId: string): SharedBudget {
  const answers = new Map<string, string | null>();
  setHandler(budgetGrantSignal, ({ key, refused }) => {
    answers.set(key, refused);
  });
  const root = getExternalWorkflowHandle(rootRunId);
  return {
    async reserve(key) {
      if (!answers.has(key)) {
        await root.signal(budgetReserveSignal, { key, reply_to: ownRunId });
        await condition(() => answers.has(key));
      }
      return answers.get(key) ?? null;
    },
    // Also when the call was cancelled: the root must learn that the call is given back.
    settle: (key, tokens, released) =>
      CancellationScope.nonCancellable(() =>
        root.signal(budgetSettleSignal, { key, tokens, released }).catch(() => undefined),
      ),
  };
}
