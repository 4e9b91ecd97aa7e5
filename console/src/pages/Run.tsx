/**
 * A run's page: header with status, usage and actions; the step graph, updated live from the event stream (each event
 * re-reads the status, throttled); the selected step's panel, with an agent's text as it is written; the recent events.
 */
import { useEffect, useMemo, useReducer, useRef, useState } from 'react';
import {
  ApiError,
  errorMessage,
  get,
  post,
  ACTIVE_RUN_STATUSES,
  type RunView,
  type StartedRun,
  type Workflow,
} from '../api';
import { followRun, type RunEvent } from '../events';
import { ErrorNote, Field, formatDate, formatDuration, formatNumber, span, StatusBadge } from '../format';
import { dependencies, StepGraph, type GraphNode } from '../graph';
import { parseExecutionId } from '../../../domain/exec-id';
import { useInterval, useLoad } from '../hooks';
import { applyLiveEvent, NO_LIVE_TEXT, lastWriter, type LiveTexts } from '../live-text';
import { Link, navigate, useLocation } from '../router';
import { StepPanel } from './StepPanel';
import { WaitingBox } from './Waiting';

/** At most one status read per this interval while events pour in (the last event always gets its read). */
const THROTTLE_MS = 400;
/** Without a live stream (refused, reconnecting), poll instead. */
const POLL_MS = 4000;
const EVENTS_KEPT = 40;

function useThrottled(fn: () => void, ms: number): () => void {
  const ref = useRef({ fn, last: 0, timer: 0 });
  ref.current.fn = fn;
  useEffect(() => () => window.clearTimeout(ref.current.timer), []);
  return useMemo(
    () => () => {
      const s = ref.current;
      if (s.timer) return;
      const wait = Math.max(0, s.last + ms - Date.now());
      s.timer = window.setTimeout(() => {
        s.timer = 0;
        s.last = Date.now();
        s.fn();
      }, wait);
    },
    [ms],
  );
}

export function RunPage({ runId }: { runId: string }) {
  const { query } = useLocation();
  const run = useLoad((signal) => get<RunView>(`/workflows/runs/${encodeURIComponent(runId)}/status`, signal), [runId]);
  const workflowId = run.data?.workflow_id ?? null;
  const workflow = useLoad(
    async (signal) => {
      if (!workflowId) return null;
      try {
        return await get<Workflow>(`/workflows/${encodeURIComponent(workflowId)}`, signal);
      } catch (err) {
        // A deleted workflow: the run still shows, in list order.
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
    [workflowId],
  );
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [liveText, applyLive] = useReducer(
    (state: LiveTexts, action: RunEvent | 'reset') =>
      action === 'reset' ? NO_LIVE_TEXT : applyLiveEvent(state, action),
    NO_LIVE_TEXT,
  );
  const [live, setLive] = useState<'connecting' | 'live' | 'reconnecting' | 'ended' | 'off'>('off');
  const reload = useThrottled(run.reload, THROTTLE_MS);
  const active = run.data ? ACTIVE_RUN_STATUSES.includes(run.data.status) : false;

  useEffect(() => {
    setEvents([]);
    applyLive('reset');
  }, [runId]);

  useEffect(() => {
    if (!active) return;
    const abort = new AbortController();
    setLive('connecting');
    followRun(
      runId,
      {
        onEvent: (e) => {
          applyLive(e);
          // Text deltas come many times a second: they change the live text only, not the status or the list.
          if (e.type === 'agent.text.delta' || e.type === 'agent.text.void') return;
          setEvents((list) => (list.some((x) => x.seq === e.seq) ? list : [e, ...list].slice(0, EVENTS_KEPT)));
          if (e.type === 'run.ended') setLive('ended');
          reload();
        },
        onConnection: (up) => setLive(up ? 'live' : 'reconnecting'),
        onError: () => setLive('off'),
      },
      abort.signal,
    ).then(
      () => reload(),
      () => setLive('off'),
    );
    return () => {
      abort.abort();
      setLive('off');
    };
  }, [runId, active, reload]);
  useInterval(run.reload, POLL_MS, active && live !== 'live');

  const data = run.data?.run_id === runId ? run.data : null;
  const defSteps = workflow.data?.steps ?? null;
  const nodes = useMemo<GraphNode[]>(() => {
    if (!data) return [];
    // The run's own dependencies (its snapshot's); for older runs the definition's when it still has the run's
    // steps; otherwise the list order.
    const recorded = data.steps.every((s) => s.depends_on !== null);
    const sameShape = defSteps && data.steps.every((s) => defSteps.some((d) => d.id === s.id));
    const deps = dependencies(
      recorded
        ? data.steps.map((s) => ({ id: s.id, depends_on: s.depends_on ?? [] }))
        : sameShape
          ? defSteps
          : data.steps.map((s) => ({ id: s.id })),
    );
    return data.steps.map((s) => ({
      id: s.id,
      subtitle: s.template_name,
      dependsOn: deps.get(s.id) ?? [],
      status: s.status,
      when: s.when,
      repeat: s.repeat,
      counts: s.executions?.counts ?? null,
    }));
  }, [data, defSteps]);

  if (!data) {
    return (
      <main id="main">
        <h1>Run {runId}</h1>
        <ErrorNote error={run.error} />
        {!run.error && <p aria-busy="true">Loading…</p>}
      </main>
    );
  }

  // Unless one is chosen: the failed step, else the one waiting for a decision, else the agent that wrote last. Each
  // may be an item of a map or an iteration of a loop (`each[3]`, `draft#2`): the panel of its step shows it.
  const stepOf = (execId: string | null) => {
    const stepId = execId === null ? null : (parseExecutionId(execId)?.stepId ?? execId);
    return data.steps.find((s) => s.id === stepId);
  };
  const writer = lastWriter(liveText);
  const chosen =
    query.get('step') ??
    data.error?.step_id ??
    data.steps.find((s) => s.status === 'waiting')?.id ??
    (stepOf(writer) ? writer : null);
  const selected = stepOf(chosen) ?? null;
  const select = (id: string) => navigate(`/runs/${runId}?step=${encodeURIComponent(id)}`, { replace: true });

  return (
    <main id="main" className="run-page" data-testid="run-page" data-run-id={data.run_id} data-status={data.status}>
      <header className="run-head">
        <div>
          <p className="crumbs">
            <Link to="/runs">Runs</Link> / <span className="mono">{data.run_id}</span>
          </p>
          <h1>
            {data.workflow_name} <StatusBadge status={data.status} />
          </h1>
        </div>
        <RunActions run={data} onChanged={run.reload} defaultStep={selected?.id ?? null} />
      </header>
      <ErrorNote error={run.error} />
      {data.error && (
        <p className="error" data-testid="run-error">
          <strong>{data.error.reason}</strong>
          {data.error.step_id ? ` at ${data.error.step_id}` : ''}: {data.error.message}
        </p>
      )}
      {data.progress.stalled && (
        <p className="notice" role="status">
          Stalled: {data.progress.message ?? 'no worker is picking this run up'}
        </p>
      )}
      <dl className="fields summary">
        <Field label="Workflow">
          <Link to={`/workflows/${data.workflow_id}`}>{data.workflow_id}</Link>
        </Field>
        <Field label="Created">{formatDate(data.created_at)}</Field>
        <Field label="Duration">{formatDuration(span(data.started_at, data.completed_at))}</Field>
        <Field label="Usage">
          <span data-testid="run-usage">
            {data.usage.llm_calls} model calls · {formatNumber(data.usage.input_tokens)} in /{' '}
            {formatNumber(data.usage.output_tokens)} out tokens
          </span>
          {data.budget && (
            <span className="muted">
              {' '}
              (budget {formatNumber(data.budget.max_tokens)} tokens, {formatNumber(data.budget.max_model_calls)} calls)
            </span>
          )}
        </Field>
        {data.rerun_of && (
          <Field label="Rerun of">
            <Link to={`/runs/${data.rerun_of}`}>{data.rerun_of}</Link>
          </Field>
        )}
        {data.rerun_overrides && (
          <Field label="Overrides">
            <span data-testid="rerun-overrides">
              {Object.entries(data.rerun_overrides)
                .map(([step, o]) => `${step} on ${o.model}`)
                .join(', ')}
            </span>
          </Field>
        )}
        {data.reruns.length > 0 && (
          <Field label="Reruns">
            {data.reruns.map((r) => (
              <Link key={r} to={`/runs/${r}`} className="mono list-link">
                {r}
              </Link>
            ))}
          </Field>
        )}
        <Field label="Temporal">
          <a href={data.temporal.ui_url} target="_blank" rel="noreferrer">
            Open in the Temporal Web UI
          </a>
        </Field>
      </dl>
      <WaitingBox run={data} onDecided={run.reload} />
      <div className="run-body">
        <section className="card" aria-labelledby="graph-title">
          <h2 id="graph-title">
            Steps{' '}
            <span className="muted live" role="status" data-testid="live-state">
              {live === 'live'
                ? '● live'
                : live === 'reconnecting'
                  ? 'reconnecting…'
                  : live === 'connecting'
                    ? 'connecting…'
                    : ''}
            </span>
          </h2>
          {!workflow.data && !workflow.loading && data?.steps.some((st) => st.depends_on === null) && (
            <p className="muted">The workflow definition is gone: steps are drawn in list order.</p>
          )}
          <StepGraph nodes={nodes} selected={selected?.id ?? null} onSelect={select} label="Steps of the run" />
          <p className="muted">Select a step to see its input, output and transcript.</p>
          {events.length > 0 && (
            <details className="events">
              <summary>Recent events ({events.length})</summary>
              <ol data-testid="events">
                {events.map((e) => (
                  <li key={e.seq}>
                    <span className="mono">#{e.seq}</span> {e.type} {e.type === 'run.ended' ? '' : e.exec_id}
                  </li>
                ))}
              </ol>
            </details>
          )}
        </section>
        {selected && (
          <StepPanel
            key={selected.id}
            run={data}
            step={selected}
            definition={defSteps?.find((d) => d.id === selected.id) ?? null}
            onChanged={run.reload}
            liveText={liveText}
            execId={chosen !== selected.id ? chosen : null}
            onSelectExecution={select}
          />
        )}
      </div>
    </main>
  );
}

function RunActions({
  run,
  onChanged,
  defaultStep,
}: {
  run: RunView;
  onChanged: () => void;
  defaultStep: string | null;
}) {
  const active = ACTIVE_RUN_STATUSES.includes(run.status);
  const initial = defaultStep ?? run.error?.step_id ?? run.steps.find((s) => s.status !== 'completed')?.id ?? '';
  const [fromStep, setFromStep] = useState(initial);
  // A model for the chosen agent step: how a run that failed on an unconfigured provider is recovered.
  const [model, setModel] = useState('');
  const isAgent = run.steps.find((s) => s.id === fromStep)?.kind === 'agent';
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setFromStep(initial), [initial]);

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const cancel = () =>
    act(async () => {
      await post(`/workflows/runs/${encodeURIComponent(run.run_id)}/cancel`, {});
      onChanged();
    });
  const rerun = () =>
    act(async () => {
      const started = await post<StartedRun>(`/workflows/runs/${encodeURIComponent(run.run_id)}/rerun`, {
        ...(fromStep ? { from_step: fromStep } : {}),
        ...(fromStep && isAgent && model.trim() ? { overrides: { [fromStep]: { model: model.trim() } } } : {}),
      });
      navigate(`/runs/${started.run_id}`);
    });

  return (
    <div className="run-actions">
      {active ? (
        <button type="button" className="danger" onClick={() => void cancel()} disabled={busy} data-testid="cancel-run">
          Cancel run
        </button>
      ) : (
        <form
          className="rerun"
          onSubmit={(e) => {
            e.preventDefault();
            void rerun();
          }}
        >
          <label htmlFor="rerun-from">Rerun from step</label>
          <select
            id="rerun-from"
            value={fromStep}
            onChange={(e) => setFromStep(e.target.value)}
            data-testid="rerun-from"
          >
            {run.steps.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </select>
          {isAgent && (
            <>
              <label htmlFor="rerun-model">Model (optional)</label>
              <input
                id="rerun-model"
                value={model}
                onChange={(e) => setModel(e.target.value)}
                placeholder="compat:llama3.2"
                data-testid="rerun-model"
              />
            </>
          )}
          <button type="submit" className="primary" disabled={busy} data-testid="rerun">
            Rerun
          </button>
        </form>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
