/** Approve or reject a waiting approval step, with a comment (POST …/runs/:runId/approve). */
import { useId, useState, type FormEvent } from 'react';
import { errorMessage, post } from './api';

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
