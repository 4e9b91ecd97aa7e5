/**
 * One step of a run: what it was given (the rendered input; the definition for runs recorded before inputs were), what it produced (large
 * outputs on demand), its error, attempts, timing, map items / loop iterations, and an agent's transcript.
 */
import { useState } from 'react';
import { errorMessage, getPage, type RunStep, type RunView, type StepExecution, type WorkflowStep } from '../api';
import { DecisionForm, DecisionSummary } from '../Decision';
import {
  ErrorNote,
  Field,
  formatBytes,
  formatDate,
  formatDuration,
  formatNumber,
  Json,
  span,
  StatusBadge,
} from '../format';
import { liveTurnsOf, type LiveTexts } from '../live-text';
import { Link } from '../router';
import { Transcript } from './Transcript';

function isStoredRef(v: unknown): v is { stored_by_reference: true; bytes: number } {
  return typeof v === 'object' && v !== null && (v as { stored_by_reference?: unknown }).stored_by_reference === true;
}

export function StepPanel({
  run,
  step,
  definition,
  onChanged,
  liveText,
}: {
  run: RunView;
  step: RunStep;
  definition: WorkflowStep | null;
  onChanged: () => void;
  liveText: LiveTexts;
}) {
  const { id: _id, ...defined } = definition ?? { id: '' };
  const live = liveTurnsOf(liveText, step.id);
  const endedTurns = live.filter((t) => t.ended).length;
  return (
    <section className="card step-panel" aria-labelledby="step-title" data-testid="step-panel" data-step-id={step.id}>
      <h2 id="step-title">
        Step <span className="mono">{step.id}</span> <StatusBadge status={step.status} />
      </h2>
      <dl className="fields">
        <Field label="Template">
          {step.template_name}{' '}
          <span className="muted">
            ({step.kind}
            {step.action_type ? `: ${step.action_type}` : ''})
          </span>
        </Field>
        {step.when && <Field label="Condition">{step.when}</Field>}
        {step.skip_reason && <Field label="Skipped because">{step.skip_reason}</Field>}
        {step.action_type === 'approval' && step.status === 'completed' && !step.executions && (
          <Field label="Decision">
            <DecisionSummary output={step.output} />
          </Field>
        )}
        <Field label="Attempts">{step.attempts}</Field>
        <Field label="Started">{formatDate(step.started_at)}</Field>
        <Field label="Completed">{formatDate(step.completed_at)}</Field>
        <Field label="Duration">{formatDuration(span(step.started_at, step.completed_at))}</Field>
        {step.usage.llm_calls > 0 && (
          <Field label="Usage">
            {step.usage.llm_calls} model calls · {formatNumber(step.usage.input_tokens)} in /{' '}
            {formatNumber(step.usage.output_tokens)} out
          </Field>
        )}
        {step.reused_from_run_id && (
          <Field label="Reused from">
            <Link to={`/runs/${step.reused_from_run_id}`}>{step.reused_from_run_id}</Link>
          </Field>
        )}
        {step.child_run_id && (
          <Field label="Sub-workflow run">
            <Link to={`/runs/${step.child_run_id}`}>{step.child_run_id}</Link>
          </Field>
        )}
      </dl>
      {step.status === 'waiting' && !step.executions && (
        <DecisionForm runId={run.run_id} stepId={step.id} onDecided={onChanged} />
      )}
      {step.error && (
        <>
          <h3>Error</h3>
          <p className="error" data-testid="step-error">
            <strong>{step.error.reason}</strong>: {step.error.message}
          </p>
        </>
      )}
      {step.egress_denied.length > 0 && (
        <>
          <h3>Refused by the egress policy</h3>
          <ul>
            {step.egress_denied.map((d) => (
              <li key={d.seq}>
                {d.tool} → {d.target}
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Output</h3>
      <Output step={step} run={run} />
      {step.executions && <Executions run={run} step={step} onChanged={onChanged} />}
      <h3>Input</h3>
      {step.input !== null && step.input !== undefined ? (
        <>
          <Json value={step.input} label={`Input of ${step.id}`} />
          {definition && (
            <details>
              <summary>Step definition</summary>
              <Json value={defined} label={`Definition of ${step.id}`} />
            </details>
          )}
        </>
      ) : step.status === 'pending' || step.status === 'skipped' ? (
        <p className="muted">Not started: the input is rendered when the step starts.</p>
      ) : definition ? (
        <>
          <p className="muted">
            The rendered input is not recorded: below are the run input and the step as the workflow defines it now
            (references such as <code>{'{{input.x}}'}</code> are filled in at run time).
          </p>
          <h4>Run input</h4>
          <Json value={run.input} label="Run input" />
          <h4>Step definition</h4>
          <Json value={defined} label={`Definition of ${step.id}`} />
        </>
      ) : (
        <p className="muted">The workflow definition is not available (deleted or changed).</p>
      )}
      {step.kind === 'agent' && step.status !== 'pending' && step.status !== 'skipped' && (
        <Transcript
          runId={run.run_id}
          stepId={step.id}
          // A turn that ended on the event stream is re-read at once: its final text replaces the live one.
          version={`${step.status}:${step.turns ?? 0}:${step.attempts}:${endedTurns}`}
          live={live}
        />
      )}
    </section>
  );
}

function Output({ step, run }: { step: RunStep; run: RunView }) {
  const [shown, setShown] = useState(false);
  if (step.output === null || step.output === undefined) return <p className="muted">No output.</p>;
  if (isStoredRef(step.output)) {
    return shown ? (
      <Json value={run.outputs[step.id]} label={`Output of ${step.id}`} />
    ) : (
      <button type="button" onClick={() => setShown(true)} data-testid="show-output">
        Show output ({formatBytes(step.output.bytes)}, stored by reference)
      </button>
    );
  }
  return <Json value={step.output} label={`Output of ${step.id}`} />;
}

/** `each[3]` → `[3]`, `retry#2` → `#2`: the panel's heading already names the step. */
function shortExecId(stepId: string, execId: string): string {
  return execId.startsWith(stepId) && execId.length > stepId.length ? execId.slice(stepId.length) : execId;
}

function Executions({ run, step, onChanged }: { run: RunView; step: RunStep; onChanged: () => void }) {
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
              <tr key={e.exec_id} data-testid="execution-row" data-status={e.status}>
                <td className="mono" title={e.exec_id}>
                  {shortExecId(step.id, e.exec_id)}
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
    </section>
  );
}
