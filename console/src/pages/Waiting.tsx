/**
 * The run page's box of approvals waiting for a decision: for each, what it asks above the Approve / Reject form. An
 * approval step asks what its rendered input says; an agent step waiting before a destructive MCP tool call asks
 * what the approvals inbox lists for it (the tool, its server and the arguments), read from there.
 */
import { approvalRequest, DecisionForm } from '../Decision';
import { getPage, type Approval, type RunView } from '../api';
import { useLoad } from '../hooks';

/** The inbox page read for agent steps' requests: enough for any one run's waiting calls. */
const INBOX_PAGE = '/approvals?limit=200';

/** Every execution of the run waiting for a decision: plain steps, and items or iterations of maps and loops. */
function waitingExecutions(run: RunView): { id: string; input: unknown; agent: boolean }[] {
  return run.steps.flatMap((s) => {
    const agent = s.kind === 'agent';
    return s.executions
      ? s.executions.shown.filter((e) => e.status === 'waiting').map((e) => ({ id: e.exec_id, input: e.input, agent }))
      : s.status === 'waiting'
        ? [{ id: s.id, input: s.input, agent }]
        : [];
  });
}

export function WaitingBox({ run, onDecided }: { run: RunView; onDecided: () => void }) {
  const waiting = waitingExecutions(run);
  const agentIds = waiting.filter((w) => w.agent).map((w) => w.id);
  // Reloaded whenever the set of waiting agent executions changes (a second call of the same step: the run's update).
  const inbox = useLoad<Approval[]>(
    async (signal) => (agentIds.length === 0 ? [] : (await getPage<Approval>(INBOX_PAGE, signal)).items),
    [agentIds.join(','), run.updated_at],
  );
  if (waiting.length === 0) return null;
  const fromInbox = (id: string) => {
    const a = inbox.data?.find((x) => x.run_id === run.run_id && x.step_id === id);
    return a ? { message: a.message, instructions: a.instructions } : null;
  };
  return (
    <section className="card waiting" aria-labelledby="waiting-title" data-testid="waiting-box">
      <h2 id="waiting-title">Waiting for a decision</h2>
      {waiting.map(({ id, input, agent }) => {
        const request = agent ? fromInbox(id) : approvalRequest(input);
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
            ) : agent ? (
              <p className="muted">{inbox.loading ? 'Loading what the agent asks…' : 'An agent tool call waits.'}</p>
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
