/**
 * Approvals waiting in a run, by execution id: several can wait at once (parallel branches, map items), and each is
 * decided by its own id through the `approve` update. The update handler and the waiting steps share this object.
 * An approval step waits once; an agent step waits once per destructive MCP tool call, one call at a time
 * (`awaitDecision`): the inbox and the decision name the execution, so two calls of one execution cannot wait at once.
 */
import { condition } from '@temporalio/workflow';
import type { ApprovalDecision } from '../../domain/messages';

export class Approvals {
  private readonly waiting = new Set<string>();
  private readonly decisions = new Map<string, ApprovalDecision>();
  /** Per execution: the end of the last decision asked for (the next one waits for it). */
  private readonly queues = new Map<string, Promise<unknown>>();

  /** The update's validator: only a waiting, undecided execution takes a decision. */
  accepts(execId: string): boolean {
    return this.waiting.has(execId) && !this.decisions.has(execId);
  }

  decide(decision: ApprovalDecision): void {
    this.decisions.set(decision.step_id, decision);
  }

  startWaiting(execId: string): void {
    this.waiting.add(execId);
    this.decisions.delete(execId);
  }

  decided(execId: string): boolean {
    return this.decisions.has(execId);
  }

  /** Ends the wait and hands over the decision, if one came. */
  finish(execId: string): ApprovalDecision | undefined {
    this.waiting.delete(execId);
    const decision = this.decisions.get(execId);
    this.decisions.delete(execId);
    return decision;
  }

  /** Execution ids waiting now (the progress query). */
  list(): string[] {
    return [...this.waiting];
  }

  /**
   * Waits for a decision on one tool call of `execId` after the calls queued before it: starts accepting a decision,
   * then `announce`s the approval (the inbox), then waits without a time limit (the run's deadline bounds it).
   */
  awaitDecision(execId: string, announce: () => Promise<unknown>): Promise<ApprovalDecision> {
    const ask = async (): Promise<ApprovalDecision> => {
      this.startWaiting(execId);
      let decision: ApprovalDecision | undefined;
      try {
        await announce();
        await condition(() => this.decided(execId));
      } finally {
        decision = this.finish(execId);
      }
      // condition() without a timeout returns only once decided.
      if (!decision) throw new Error(`no decision for ${execId}`);
      return decision;
    };
    const before = this.queues.get(execId) ?? Promise.resolve();
    const mine = before.then(ask);
    this.queues.set(
      execId,
      mine.catch(() => undefined),
    );
    return mine;
  }
}
