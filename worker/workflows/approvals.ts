/**
 * Approvals waiting in a run, by execution id: several can wait at once (parallel branches, map items), and each is
 * decided by its own id through the `approve` update. The update handler and the waiting steps share this object.
 */
import type { ApprovalDecision } from '../../domain/messages';

export class Approvals {
  private readonly waiting = new Set<string>();
  private readonly decisions = new Map<string, ApprovalDecision>();

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
}
