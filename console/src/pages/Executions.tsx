/**
 * The items of a map step or the iterations of a loop step: counts, a table (paged past the first ones the status
 * shows) with each one's status, attempts and output or error, a decision form for one waiting for approval, and for
 * an agent step the chosen one's transcript with its live text.
 */
import { useState } from 'react';
import { parseExecutionId } from '../../../domain/exec-id';
import { errorMessage, getPage, type RunStep, type RunView, type StepExecution } from '../api';
import { DecisionForm } from '../Decision';
import { ErrorNote, StatusBadge } from '../format';
import type { LiveTexts } from '../live-text';
import { ExecutionTranscript } from './ExecutionTranscript';

/** `each[3]` → `[3]`, `retry#2` → `#2`: the panel's heading already names the step. */
function shortExecId(stepId: string, execId: string): string {
  return execId.startsWith(stepId) && execId.length > stepId.length ? execId.slice(stepId.length) : execId;
}

/** True when `execId` is an item or iteration of the step `stepId`. */
export function isExecutionOf(stepId: string, execId: string): boolean {
  return execId !== stepId && parseExecutionId(execId)?.stepId === stepId;
}

export function Executions({
  run,
  step,
  onChanged,
  chosen,
  onSelect,
  liveText,
}: {
  run: RunView;
  step: RunStep;
  onChanged: () => void;
  /** The item or iteration whose transcript shows under the table (agent steps only). */
  chosen: string | null;
  onSelect: ((execId: string) => void) | null;
  liveText: LiveTexts;
}) {
  const ex = step.executions;
  const [more, setMore] = useState<StepExecution[]>([]);
  const [next, setNext] = useState<string | null>(ex?.more_url ?? null);
  const [error, setError] = useState<string | null>(null);
  if (!ex) return null;
  const c = ex.counts;
  const rows = [...ex.shown, ...more.filter((m) => !ex.shown.some((s) => s.exec_id === m.exec_id))];
  const loadMore = async () => {
    if (!next) return;
    try {
      // The first page repeats the shown items; later pages go on from the cursor.
      const page = await getPage<StepExecution>(next);
      setMore((m) => [...m, ...page.items]);
      setNext(page.next);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <section aria-labelledby="executions-title">
      <h3 id="executions-title">{step.repeat === 'loop' ? 'Iterations' : 'Items'}</h3>
      <p>
        {c.total} total · {c.completed} completed · {c.running} running · {c.waiting} waiting · {c.failed} failed ·{' '}
        {c.skipped} skipped · {c.pending} pending
      </p>
      {/* Its own scroll frame: a wide output never pushes the table out of the panel. */}
      <div className="table-scroll" data-testid="executions-table">
        <table className="compact executions">
          <thead>
            <tr>
              <th scope="col">{step.repeat === 'loop' ? 'Iteration' : 'Item'}</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Output or error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr
                key={e.exec_id}
                data-testid="execution-row"
                data-status={e.status}
                className={e.exec_id === chosen ? 'chosen' : undefined}
              >
                <td className="mono" title={e.exec_id}>
                  {onSelect ? (
                    <button
                      type="button"
                      className="exec-select"
                      aria-pressed={e.exec_id === chosen}
                      aria-label={`Transcript of ${e.exec_id}`}
                      onClick={() => onSelect(e.exec_id)}
                      data-testid="execution-select"
                    >
                      {shortExecId(step.id, e.exec_id)}
                    </button>
                  ) : (
                    shortExecId(step.id, e.exec_id)
                  )}
                </td>
                <td>
                  <StatusBadge status={e.status} />
                </td>
                <td>{e.attempts}</td>
                <td>
                  {e.error ? (
                    <span className="error-text">
                      {e.error.reason}: {e.error.message}
                    </span>
                  ) : e.status === 'waiting' ? (
                    <DecisionForm runId={run.run_id} stepId={e.exec_id} onDecided={onChanged} />
                  ) : (
                    <code className="clip">{e.output === null ? '—' : JSON.stringify(e.output)}</code>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorNote error={error} />
      {next && (
        <button type="button" onClick={() => void loadMore()}>
          Load more {step.repeat === 'loop' ? 'iterations' : 'items'}
        </button>
      )}
      {onSelect && <ChosenTranscript run={run} step={step} chosen={chosen} rows={rows} liveText={liveText} />}
    </section>
  );
}

/** The transcript of the chosen item or iteration of an agent step, once it has started. */
function ChosenTranscript({
  run,
  step,
  chosen,
  rows,
  liveText,
}: {
  run: RunView;
  step: RunStep;
  chosen: string | null;
  rows: StepExecution[];
  liveText: LiveTexts;
}) {
  const noun = step.repeat === 'loop' ? 'iteration' : 'item';
  if (!chosen) return <p className="muted">Choose an {noun} to see its transcript.</p>;
  // An item past the pages read has no row: its transcript is read, and read again as its live turns end.
  const progress = rows.find((e) => e.exec_id === chosen) ?? null;
  if (progress?.status === 'pending' || progress?.status === 'skipped') {
    return (
      <p className="muted">
        {noun[0]!.toUpperCase() + noun.slice(1)} {shortExecId(step.id, chosen)} has not run: no transcript.
      </p>
    );
  }
  return (
    <ExecutionTranscript
      runId={run.run_id}
      execId={chosen}
      progress={progress}
      liveText={liveText}
      title={`Transcript of ${noun} ${shortExecId(step.id, chosen)}`}
    />
  );
}
