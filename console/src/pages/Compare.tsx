/**
 * An experiment against a baseline (GET /api/v1/experiments/:id/compare, `?baseline=` in the page URL): each scorer's
 * mean with its spread on both sides, the distribution of item scores and the cost of each item as charts, the
 * regression verdict, and per item improved / regressed / unchanged with the expected, baseline and candidate outputs
 * side by side. The outputs come from both experiments' results and the dataset's items at the pinned version.
 */
import { get, type Comparison, type DatasetItem, type ExperimentDetail, type ExperimentResult } from '../api';
import { PairedBars, type BarGroup } from '../charts';
import { ErrorNote, formatNumber } from '../format';
import { useLoad } from '../hooks';
import { readAll } from '../paging';
import { Link, useLocation } from '../router';
import { formatCost } from './Usage';
import { byItem, CompareItems, fixed, type Side } from './CompareItems';
import { BaselineSelect } from './Experiment';

/** Results and items read for the side-by-side outputs and the charts, at most, per side. */
const READ_CAP = 2000;
const BINS = 10;

/** Each scorer's item scores in ten bins from 0 to 1 (1 falls in the last). */
function histogram(results: ExperimentResult[], scorer: string): number[] {
  const bins = new Array<number>(BINS).fill(0);
  for (const r of results) {
    for (const s of r.scores) if (s.name === scorer) bins[Math.min(BINS - 1, Math.floor(s.score * BINS))]! += 1;
  }
  return bins;
}

/** Mean per item of its runs' cost, or of their tokens when no run has a cost. */
function perItem(results: ExperimentResult[], useCost: boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const [item, runs] of byItem(results)) {
    const values = runs.map((r) => (useCost ? (r.usage.cost ?? 0) : r.usage.input_tokens + r.usage.output_tokens));
    out.set(item, values.reduce((a, b) => a + b, 0) / values.length);
  }
  return out;
}

export function ComparePage({ experimentId }: { experimentId: string }) {
  const { query } = useLocation();
  const baseline = query.get('baseline');
  const exp = useLoad((signal) => get<ExperimentDetail>(`/experiments/${experimentId}`, signal), [experimentId]);
  const data = exp.data?.id === experimentId ? exp.data : null;
  return (
    <main id="main" data-testid="compare-page">
      <p className="crumbs">
        <Link to="/experiments">Experiments</Link> /{' '}
        <Link to={`/experiments/${experimentId}`} className="mono">
          {experimentId}
        </Link>{' '}
        / compare
      </p>
      <h1>Compare {data?.name ?? experimentId}</h1>
      <ErrorNote error={exp.error} />
      {data && (
        <p>
          <BaselineSelect experimentId={experimentId} datasetId={data.dataset_id} value={baseline} />
        </p>
      )}
      {data && baseline && <Comparing key={baseline} candidate={data} baselineId={baseline} />}
      {data && !baseline && <p className="empty">Pick a baseline: an earlier experiment over the same dataset.</p>}
    </main>
  );
}

function Comparing({ candidate, baselineId }: { candidate: ExperimentDetail; baselineId: string }) {
  const id = candidate.id;
  const cmp = useLoad(
    (signal) => get<Comparison>(`/experiments/${id}/compare?baseline=${encodeURIComponent(baselineId)}`, signal),
    [id, baselineId],
  );
  const sides = useLoad(
    async (signal) => {
      const read = (e: string) => readAll<ExperimentResult>(`/experiments/${e}/results?limit=200`, READ_CAP, signal);
      const [b, c] = await Promise.all([read(baselineId), read(id)]);
      return { baseline: { results: b.items, more: b.more }, candidate: { results: c.items, more: c.more } };
    },
    [id, baselineId],
  );
  const items = useLoad(
    (signal) =>
      readAll<DatasetItem>(
        `/datasets/${candidate.dataset_id}/items?limit=200&version=${candidate.dataset_version}`,
        READ_CAP,
        signal,
      ),
    [candidate.dataset_id, candidate.dataset_version],
  );
  const c = cmp.data;
  if (!c) return <ErrorNote error={cmp.error} />;
  return (
    <>
      <ErrorNote error={sides.error ?? items.error} />
      <section className="card usage-section" aria-labelledby="verdict-title" data-testid="verdict">
        <h2 id="verdict-title">{c.regression.regressed ? 'Regression' : 'No regression'}</h2>
        {c.regression.reasons.length > 0 && (
          <ul>
            {c.regression.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        )}
        <p className="muted" data-testid="change-counts">
          Items: {c.counts.improved} improved, {c.counts.regressed} regressed, {c.counts.mixed} mixed,{' '}
          {c.counts.unchanged} unchanged
          {c.counts.only_baseline + c.counts.only_candidate > 0 &&
            `, ${c.counts.only_baseline + c.counts.only_candidate} on one side only`}
        </p>
      </section>
      <Scorers comparison={c} sides={sides.data} />
      <Costs comparison={c} sides={sides.data} />
      {sides.data && (sides.data.baseline.more || sides.data.candidate.more) && (
        <p className="notice">The charts and outputs show the first {READ_CAP} results of each side.</p>
      )}
      <CompareItems comparison={c} sides={sides.data} expected={items.data?.items ?? null} />
    </>
  );
}

function Scorers({ comparison, sides }: { comparison: Comparison; sides: { baseline: Side; candidate: Side } | null }) {
  const stat = (s: Comparison['scorers'][number]['baseline']) =>
    s ? `${s.mean.toFixed(3)} ± ${s.sd.toFixed(3)}` : '—';
  const ci = (s: Comparison['scorers'][number]['baseline']) =>
    s?.ci95 ? `${s.ci95[0].toFixed(2)}–${s.ci95[1].toFixed(2)}` : '—';
  return (
    <section className="card usage-section" aria-labelledby="scorers-title">
      <h2 id="scorers-title">Scores</h2>
      <table className="compact" aria-label="Scorers" data-testid="scorer-table">
        <thead>
          <tr>
            <th scope="col">Scorer</th>
            <th scope="col">Baseline mean ± sd</th>
            <th scope="col">95 % interval</th>
            <th scope="col">Candidate mean ± sd</th>
            <th scope="col">95 % interval</th>
            <th scope="col" className="num">
              Pass rate
            </th>
            <th scope="col" className="num">
              Delta
            </th>
          </tr>
        </thead>
        <tbody>
          {comparison.scorers.map((s) => (
            <tr key={s.name} data-testid="scorer-row" data-scorer={s.name} data-delta={s.delta ?? ''}>
              <td className="mono">{s.name}</td>
              <td>{stat(s.baseline)}</td>
              <td>{ci(s.baseline)}</td>
              <td>{stat(s.candidate)}</td>
              <td>{ci(s.candidate)}</td>
              <td className="num">
                {fixed(s.baseline?.pass_rate)} → {fixed(s.candidate?.pass_rate)}
              </td>
              <td className="num">{s.delta === null ? '—' : `${s.delta > 0 ? '+' : ''}${s.delta.toFixed(3)}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {sides &&
        comparison.scorers.map((s) => {
          const b = histogram(sides.baseline.results, s.name);
          const cnd = histogram(sides.candidate.results, s.name);
          const groups: BarGroup[] = b.map((n, i) => ({
            label: `${(i / BINS).toFixed(1)}–${((i + 1) / BINS).toFixed(1)}`,
            baseline: n,
            candidate: cnd[i] ?? 0,
          }));
          return (
            <PairedBars
              key={s.name}
              groups={groups}
              title={`Distribution of ${s.name} scores (item runs per score band)`}
              unit="runs"
              testId="score-chart"
            />
          );
        })}
    </section>
  );
}

function Costs({ comparison, sides }: { comparison: Comparison; sides: { baseline: Side; candidate: Side } | null }) {
  const { baseline: ub, candidate: uc } = comparison.usage;
  const useCost = ub.cost !== null || uc.cost !== null;
  const rows: [string, (u: typeof ub) => string][] = [
    [
      'Tokens per run',
      (u) =>
        u.tokens ? `${formatNumber(Math.round(u.tokens.mean))} (p95 ${formatNumber(Math.round(u.tokens.p95))})` : '—',
    ],
    ['Model calls per run', (u) => (u.llm_calls ? u.llm_calls.mean.toFixed(2) : '—')],
    ['Cost per run', (u) => formatCost(u.cost?.mean ?? null)],
    [
      'Latency per run',
      (u) => (u.latency_ms ? `${Math.round(u.latency_ms.p50)} ms (p95 ${Math.round(u.latency_ms.p95)} ms)` : '—'),
    ],
    ['Failed runs', (u) => String(u.errors)],
  ];
  let chart = null;
  if (sides) {
    const b = perItem(sides.baseline.results, useCost);
    const c = perItem(sides.candidate.results, useCost);
    const groups = comparison.items.map((i) => ({
      label: i.item_id,
      baseline: b.get(i.item_id) ?? null,
      candidate: c.get(i.item_id) ?? null,
    }));
    chart = (
      <PairedBars
        groups={groups}
        title={useCost ? 'Cost per item (USD, mean over repetitions)' : 'Tokens per item (no price covers the models)'}
        unit={useCost ? 'USD' : 'tokens'}
        format={useCost ? (n) => formatCost(n) : formatNumber}
        testId="cost-chart"
      />
    );
  }
  return (
    <section className="card usage-section" aria-labelledby="cost-title">
      <h2 id="cost-title">Cost and latency</h2>
      <table className="compact" aria-label="Cost and latency" data-testid="usage-compare">
        <thead>
          <tr>
            <th scope="col" />
            <th scope="col">Baseline</th>
            <th scope="col">Candidate</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, f]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{f(ub)}</td>
              <td>{f(uc)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {chart}
    </section>
  );
}
