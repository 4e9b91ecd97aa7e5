/** Approve or reject a waiting approval step, with a comment (POST …/runs/:runId/approve); what it asks; its decision. */
import { useId, useState, type FormEvent } from 'react';
import { errorMessage, post } from './api';
import { formatDate } from './format';

export function DecisionForm({
  runId,
  stepId,
  onDecided,
}: {
  runId: string;
  /** The step id, or an execution id (`review[2]`) inside a map or loop. */
  stepId: string;
  onDecided: (approved: boolean) => void;
}) {
  const id = useId();
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const decide = async (approved: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await post(`/workflows/runs/${encodeURIComponent(runId)}/approve`, {
        step_id: stepId,
        approved,
        comment: comment.trim() === '' ? null : comment.trim(),
      });
      onDecided(approved);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void decide(true);
  };

  return (
    <form
      className="decision"
      onSubmit={submit}
      aria-label={`Decide ${stepId}`}
      data-testid="decision"
      data-step-id={stepId}
    >
      <label htmlFor={`${id}-comment`}>Comment on {stepId} (optional)</label>
      <textarea
        id={`${id}-comment`}
        rows={2}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        maxLength={4000}
        data-testid="decision-comment"
      />
      <div className="buttons">
        <button type="submit" className="approve" disabled={busy} data-testid="approve-button">
          Approve
        </button>
        <button
          type="button"
          className="reject"
          disabled={busy}
          onClick={() => void decide(false)}
          data-testid="reject-button"
        >
          Reject
        </button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** What an approval asks, read from its rendered input (its config); null when the run did not record it. */
export function approvalRequest(input: unknown): { message: string; instructions: string | null } | null {
  if (typeof input !== 'object' || input === null) return null;
  const { message, instructions } = input as { message?: unknown; instructions?: unknown };
  if (typeof message !== 'string') return null;
  return { message, instructions: typeof instructions === 'string' ? instructions : null };
}

/**
 * An approved step's decision in words. `decided_by` is a user id, and only a run's owner may decide its approvals
 * (POST …/approve acts for the caller on the caller's runs), while the console shows only the caller's runs: so the
 * decider is the signed-in user, "you" (docs/decisions/0070-approval-decider-shown-as-you.md).
 */
export function DecisionSummary({ output }: { output: unknown }) {
  if (typeof output !== 'object' || output === null) return null;
  const { approved, comment, decided_by, decided_at } = output as {
    approved?: unknown;
    comment?: unknown;
    decided_by?: unknown;
    decided_at?: unknown;
  };
  if (typeof approved !== 'boolean') return null;
  return (
    <span data-testid="decision-summary">
      {approved ? 'Approved' : 'Rejected'}
      {typeof decided_by === 'string' ? ' by you' : ''}
      {typeof decided_at === 'string' ? `, ${formatDate(decided_at)}` : ''}
      {typeof comment === 'string' && comment !== '' && (
        <>
          : <q>{comment}</q>
        </>
      )}
    </span>
  );
}
