/**
 * One step of a run: what it was given (the rendered input; the definition for runs recorded before inputs were), what it produced (large
 * outputs on demand), its error, attempts, timing, map items / loop iterations, and an agent's transcript — for an
 * agent map or loop, the chosen item's or iteration's.
 */
import { useState } from 'react';
import type { RunStep, RunView, WorkflowStep } from '../api';
import { DecisionForm, DecisionSummary } from '../Decision';
import { Field, formatBytes, formatDate, formatDuration, formatNumber, Json, span, StatusBadge } from '../format';
import { lastWriter, type LiveTexts } from '../live-text';
import { Link } from '../router';
import { ExecutionTranscript } from './ExecutionTranscript';
import { Executions, isExecutionOf } from './Executions';

function isStoredRef(v: unknown): v is { stored_by_reference: true; bytes: number } {
  return typeof v === 'object' && v !== null && (v as { stored_by_reference?: unknown }).stored_by_reference === true;
}

export function StepPanel({
  run,
  step,
  definition,
  onChanged,
  liveText,
  execId,
  onSelectExecution,
}: {
  run: RunView;
  step: RunStep;
  definition: WorkflowStep | null;
  onChanged: () => void;
  liveText: LiveTexts;
  /** The item or iteration chosen (its execution id), or null. */
  execId: string | null;
  onSelectExecution: (execId: string) => void;
}) {
  const { id: _id, ...defined } = definition ?? { id: '' };
  // An agent map or loop has no transcript of its own: it shows the chosen item's, else the one that wrote last.
  const agentExec =
    step.kind === 'agent' && step.repeat ? (execId ?? lastWriter(liveText, (id) => isExecutionOf(step.id, id))) : null;
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
      {step.executions && (
        <Executions
          run={run}
          step={step}
          onChanged={onChanged}
          chosen={agentExec}
          onSelect={step.kind === 'agent' ? onSelectExecution : null}
          liveText={liveText}
        />
      )}
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
      {step.kind === 'agent' && !step.repeat && step.status !== 'pending' && step.status !== 'skipped' && (
        <ExecutionTranscript runId={run.run_id} execId={step.id} progress={step} liveText={liveText} />
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
