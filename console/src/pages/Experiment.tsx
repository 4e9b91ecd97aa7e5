/**
 * One experiment: status, progress, spend and each scorer's summary, refreshed while it runs; and the way to its
 * comparison page, with a baseline picked among the caller's experiments over the same dataset.
 */
import { get, type Experiment, type ExperimentDetail } from '../api';
import { ErrorNote, Field, formatDate, formatNumber, StatusBadge } from '../format';
import { useInterval, useLoad } from '../hooks';
import { readAll } from '../paging';
import { Link, navigate } from '../router';

const ENDED = ['completed', 'budget_exhausted', 'cancelled', 'failed'];
/** Experiments offered as a baseline: the caller's newest, at most this many read. */
const BASELINES_READ = 400;

/** An experiment's status as a badge (budget_exhausted reads as a failure-coloured "Budget spent"). */
export function ExperimentStatus({ status }: { status: string }) {
  if (status === 'budget_exhausted') {
    return (
      <span className="badge status-failed" data-testid="status" data-status={status}>
        Budget spent
      </span>
    );
  }
  return <StatusBadge status={status} />;
}

/** The caller's other experiments over `datasetId`, newest first: the baselines a comparison may take. */
export function useBaselines(datasetId: string | null, except: string) {
  return useLoad(
    async (signal) =>
      datasetId === null
        ? []
        : (await readAll<Experiment>('/experiments?limit=200', BASELINES_READ, signal)).items.filter(
            (e) => e.dataset_id === datasetId && e.id !== except,
          ),
    [datasetId, except],
  );
}

export function BaselineSelect({
  experimentId,
  datasetId,
  value,
}: {
  experimentId: string;
  datasetId: string;
  value: string | null;
}) {
  const baselines = useBaselines(datasetId, experimentId);
  const options = baselines.data ?? [];
  return (
    <label>
      Baseline{' '}
      <select
        value={value ?? ''}
        data-testid="baseline-select"
        onChange={(e) =>
          e.target.value &&
          navigate(`/experiments/${experimentId}/compare?baseline=${encodeURIComponent(e.target.value)}`)
        }
      >
        <option value="">{options.length === 0 ? 'No other experiment of this dataset' : 'Pick a baseline…'}</option>
        {options.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name} ({e.id}, {formatDate(e.created_at)})
          </option>
        ))}
      </select>
    </label>
  );
}

export function ExperimentPage({ experimentId }: { experimentId: string }) {
  const exp = useLoad((signal) => get<ExperimentDetail>(`/experiments/${experimentId}`, signal), [experimentId]);
  const data = exp.data?.id === experimentId ? exp.data : null;
  useInterval(exp.reload, 2000, data !== null && !ENDED.includes(data.status));
  if (!data) {
    return (
      <main id="main">
        <h1>Experiment {experimentId}</h1>
        <ErrorNote error={exp.error} />
        {!exp.error && <p aria-busy="true">Loading…</p>}
      </main>
    );
  }
  return (
    <main id="main" data-testid="experiment-page">
      <p className="crumbs">
        <Link to="/experiments">Experiments</Link> / <span className="mono">{data.id}</span>
      </p>
      <h1>
        {data.name} <ExperimentStatus status={data.status} />
      </h1>
      {data.message && <p className="notice">{data.message}</p>}
      <dl className="fields">
        <Field label="Dataset">
          <Link to={`/datasets/${data.dataset_id}?version=${data.dataset_version}`} className="mono">
            {data.dataset_id} v{data.dataset_version}
          </Link>
        </Field>
        <Field label="Workflow">
          <Link to={`/workflows/${data.workflow_id}`} className="mono">
            {data.workflow_id}
          </Link>
          {data.overrides &&
            Object.entries(data.overrides).map(([step, o]) => (
              <span key={step} className="muted">
                {' '}
                · {step}: {o.model}
              </span>
            ))}
        </Field>
        <Field label="Runs">
          {data.progress.done} of {data.progress.total} ({data.repetitions} per item, {data.concurrency} at once)
        </Field>
        <Field label="Spent">
          {formatNumber(data.spend.tokens)} tokens, {formatNumber(data.spend.model_calls)} model calls
        </Field>
        <Field label="Created">{formatDate(data.created_at)}</Field>
      </dl>
      <section aria-labelledby="summary-title">
        <h2 id="summary-title">Scores</h2>
        {data.summary.length === 0 ? (
          <p className="empty">No results yet.</p>
        ) : (
          <table className="compact" aria-label="Scores" data-testid="summary-table">
            <thead>
              <tr>
                <th scope="col">Scorer</th>
                <th scope="col" className="num">
                  Mean
                </th>
                <th scope="col" className="num">
                  SD
                </th>
                <th scope="col" className="num">
                  Pass rate
                </th>
                <th scope="col" className="num">
                  N
                </th>
              </tr>
            </thead>
            <tbody>
              {data.summary.map((s) => (
                <tr key={s.name}>
                  <td className="mono">{s.name}</td>
                  <td className="num">{s.mean.toFixed(3)}</td>
                  <td className="num">{s.sd.toFixed(3)}</td>
                  <td className="num">{s.pass_rate.toFixed(3)}</td>
                  <td className="num">{s.n}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="compare-title">
        <h2 id="compare-title">Compare</h2>
        <p>
          <BaselineSelect experimentId={data.id} datasetId={data.dataset_id} value={null} />{' '}
          <Link to={`/experiments/${data.id}/compare`}>Open the comparison page</Link>
        </p>
      </section>
    </main>
  );
}
