/**
 * The run page's box of approvals waiting for a decision: for each, what it asks (the message and instructions of its
 * rendered input, as the approvals inbox shows them) above the Approve / Reject form.
 */
import { approvalRequest, DecisionForm } from '../Decision';
import type { RunView } from '../api';

/** Every execution of the run waiting for a decision: plain steps, and items or iterations of maps and loops. */
function waitingExecutions(run: RunView): { id: string; input: unknown }[] {
  return run.steps.flatMap((s) =>
    s.executions
      ? s.executions.shown.filter((e) => e.status === 'waiting').map((e) => ({ id: e.exec_id, input: e.input }))
      : s.status === 'waiting'
        ? [{ id: s.id, input: s.input }]
        : [],
  );
}

export function WaitingBox({ run, onDecided }: { run: RunView; onDecided: () => void }) {
  const waiting = waitingExecutions(run);
  if (waiting.length === 0) return null;
  return (
    <section className="card waiting" aria-labelledby="waiting-title" data-testid="waiting-box">
      <h2 id="waiting-title">Waiting for a decision</h2>
      {waiting.map(({ id, input }) => {
        const request = approvalRequest(input);
        return (
          <article key={id} className="waiting-item" aria-label={`Approval ${id}`} data-step-id={id}>
            <h3 className="mono">{id}</h3>
            {request ? (
              <>
                <p className="approval-message" data-testid="approval-message">
                  {request.message}
                </p>
                {request.instructions && <p className="muted">{request.instructions}</p>}
              </>
            ) : (
              <p className="muted">
                This run did not record the approval&apos;s message; the step panel shows its definition.
              </p>
            )}
            <DecisionForm runId={run.run_id} stepId={id} onDecided={onDecided} />
          </article>
        );
      })}
    </section>
  );
}
