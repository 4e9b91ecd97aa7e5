/**
 * The usage page (GET /api/v1/usage): tokens per day as a bar chart stacked by model, and a breakdown by model,
 * template, workflow or thread with tokens, calls and cost. The range and the breakdown live in the page URL
 * (shareable). Charts are plain SVG: the numbers are in the tables beside them too.
 */
import { useState, type FormEvent } from 'react';
import { get, type Usage as UsageBody, type UsageRow } from '../api';
import { ErrorNote, formatNumber } from '../format';
import { useLoad } from '../hooks';
import { navigate, useLocation } from '../router';

const BREAKDOWNS = [
  { by: 'model', label: 'Model' },
  { by: 'template', label: 'Agent template' },
  { by: 'workflow', label: 'Workflow' },
  { by: 'thread', label: 'Thread' },
] as const;
type Breakdown = (typeof BREAKDOWNS)[number]['by'];

/** Colours of the models in the daily chart, in order of their tokens; the rest share the last. */
const COLOURS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#64748b'];

const DAY_MS = 86_400_000;

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every UTC day from `from` to `to`, both included. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) days.push(utcDay(t));
  return days;
}

export function formatCost(usd: number | null): string {
  return usd === null ? '—' : `$${usd.toFixed(usd >= 100 ? 2 : 4)}`;
}

function query(from: string, to: string, groupBy: string): string {
  return `/usage?${new URLSearchParams({ from, to, group_by: groupBy }).toString()}`;
}

export function Usage() {
  const { query: params } = useLocation();
  const today = utcDay(Date.now());
  const to = params.get('to') ?? today;
  const from = params.get('from') ?? utcDay(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS);
  const by = (BREAKDOWNS.find((b) => b.by === params.get('by'))?.by ?? 'model') satisfies Breakdown;
  const daily = useLoad((signal) => get<UsageBody>(query(from, to, 'day,model'), signal), [from, to]);
  // Threads are counted from the last week's calls only: the breakdown by thread covers that week.
  const threadFrom = utcDay(Date.parse(`${today}T00:00:00Z`) - 7 * DAY_MS);
  const breakdownFrom = by === 'thread' && from < threadFrom ? threadFrom : from;
  const breakdown = useLoad((signal) => get<UsageBody>(query(breakdownFrom, to, by), signal), [breakdownFrom, to, by]);

  return (
    <main id="main">
      <h1>Usage</h1>
      <p className="muted">Tokens your model calls used, each call counted once, by UTC day.</p>
      <RangeForm from={from} to={to} by={by} />
      <ErrorNote error={daily.error ?? breakdown.error} />
      {daily.data && (
        <section className="card usage-section" aria-labelledby="usage-daily">
          <h2 id="usage-daily">Tokens per day</h2>
          <Totals total={daily.data.total} />
          <DailyChart usage={daily.data} />
        </section>
      )}
      {breakdown.data && (
        <section className="card usage-section" aria-labelledby="usage-breakdown">
          <h2 id="usage-breakdown">By {BREAKDOWNS.find((b) => b.by === by)?.label.toLowerCase()}</h2>
          {breakdownFrom !== from && <p className="muted">Threads are shown for the days from {breakdownFrom} on.</p>}
          <BreakdownTable usage={breakdown.data} by={by} />
        </section>
      )}
    </main>
  );
}

function RangeForm({ from, to, by }: { from: string; to: string; by: Breakdown }) {
  const [start, setStart] = useState(from);
  const [end, setEnd] = useState(to);
  const [breakdown, setBreakdown] = useState<Breakdown>(by);
  const apply = (e: FormEvent) => {
    e.preventDefault();
    navigate(`/usage?${new URLSearchParams({ from: start, to: end, by: breakdown }).toString()}`, { replace: true });
  };
  return (
    <form className="filters" onSubmit={apply} aria-label="Usage range">
      <div className="filter-fields">
        <label>
          From
          <input type="date" name="from" value={start} required onChange={(e) => setStart(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" name="to" value={end} required onChange={(e) => setEnd(e.target.value)} />
        </label>
        <label>
          Break down by
          <select name="by" value={breakdown} onChange={(e) => setBreakdown(e.target.value as Breakdown)}>
            {BREAKDOWNS.map((b) => (
              <option key={b.by} value={b.by}>
                {b.label}
              </option>
            ))}
          </select>
        </label>
        <div className="buttons">
          <button type="submit" className="primary">
            Show
          </button>
        </div>
      </div>
    </form>
  );
}

function Totals({ total }: { total: UsageBody['total'] }) {
  return (
    <dl className="fields usage-totals" data-testid="usage-totals">
      <div className="field-row">
        <dt>Tokens</dt>
        <dd>{formatNumber(total.tokens)}</dd>
      </div>
      <div className="field-row">
        <dt>Model calls</dt>
        <dd>{formatNumber(total.calls)}</dd>
      </div>
      <div className="field-row">
        <dt>Cost</dt>
        <dd>{formatCost(total.cost_usd)}</dd>
      </div>
    </dl>
  );
}

/** One bar a day, stacked by model (the most used first, from the bottom). */
function DailyChart({ usage }: { usage: UsageBody }) {
  const days = daysOf(usage.from, usage.to);
  const byModel = new Map<string, number>();
  for (const r of usage.rows) byModel.set(r.model ?? '', (byModel.get(r.model ?? '') ?? 0) + r.tokens);
  const models = [...byModel.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  const colour = (model: string) => COLOURS[Math.min(models.indexOf(model), COLOURS.length - 1)]!;
  const perDay = new Map<string, UsageRow[]>();
  for (const r of usage.rows) perDay.set(r.day ?? '', [...(perDay.get(r.day ?? '') ?? []), r]);
  const dayTotal = (day: string) => (perDay.get(day) ?? []).reduce((sum, r) => sum + r.tokens, 0);
  const max = Math.max(1, ...days.map(dayTotal));
  const width = 720;
  const height = 200;
  const left = 56;
  const bottom = 24;
  const slot = (width - left) / days.length;
  const bar = Math.max(1, slot * 0.8);
  const y = (tokens: number) => ((height - bottom) * tokens) / max;

  return (
    <figure className="usage-chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Tokens per day from ${usage.from} to ${usage.to}, at most ${formatNumber(max)} a day`}
        data-testid="usage-daily-chart"
      >
        <line x1={left} x2={width} y1={height - bottom} y2={height - bottom} stroke="currentColor" strokeWidth={1} />
        <text x={left - 6} y={10} textAnchor="end" fontSize={11} fill="currentColor">
          {formatNumber(max)}
        </text>
        <text x={left - 6} y={height - bottom} textAnchor="end" fontSize={11} fill="currentColor">
          0
        </text>
        {days.map((day, i) => {
          let base = height - bottom;
          const rows = [...(perDay.get(day) ?? [])].sort(
            (a, b) => models.indexOf(a.model ?? '') - models.indexOf(b.model ?? ''),
          );
          return (
            <g key={day} data-testid="usage-day" data-day={day} data-tokens={dayTotal(day)}>
              {rows.map((r) => {
                const h = y(r.tokens);
                base -= h;
                return (
                  <rect
                    key={r.model}
                    x={left + i * slot + (slot - bar) / 2}
                    y={base}
                    width={bar}
                    height={h}
                    fill={colour(r.model ?? '')}
                  >
                    <title>{`${day} · ${r.model}: ${formatNumber(r.tokens)} tokens, ${r.calls} calls`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })}
        {[0, days.length - 1].map((i) => (
          <text
            key={i}
            x={left + i * slot + slot / 2}
            y={height - 6}
            textAnchor={i === 0 ? 'start' : 'end'}
            fontSize={11}
            fill="currentColor"
          >
            {days[i]}
          </text>
        ))}
      </svg>
      <figcaption className="usage-legend">
        {models.map((m) => (
          <span key={m}>
            <svg width={10} height={10} aria-hidden="true">
              <rect width={10} height={10} fill={colour(m)} />
            </svg>{' '}
            {m}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

function labelOf(r: UsageRow, by: Breakdown): string {
  switch (by) {
    case 'model':
      return r.model ?? '';
    case 'template':
      return r.template_name ?? r.template_id ?? 'No template';
    case 'workflow':
      return r.workflow_name ?? r.workflow_id ?? 'No workflow';
    case 'thread':
      return r.thread_id ?? 'Outside threads';
  }
}

/** The groups, most tokens first, each with a bar of its share. */
function BreakdownTable({ usage, by }: { usage: UsageBody; by: Breakdown }) {
  const rows = [...usage.rows].sort((a, b) => b.tokens - a.tokens);
  const max = Math.max(1, ...rows.map((r) => r.tokens));
  if (rows.length === 0) return <p className="empty">No model calls in this range.</p>;
  return (
    <table className="compact usage-table" aria-label={`Usage by ${by}`} data-testid="usage-breakdown">
      <thead>
        <tr>
          <th scope="col">{BREAKDOWNS.find((b) => b.by === by)?.label}</th>
          <th scope="col">Share</th>
          <th scope="col" className="num">
            Input
          </th>
          <th scope="col" className="num">
            Output
          </th>
          <th scope="col" className="num">
            Calls
          </th>
          <th scope="col" className="num">
            Cost
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={labelOf(r, by)} data-testid="usage-row" data-label={labelOf(r, by)}>
            <td className="mono">{labelOf(r, by)}</td>
            <td>
              <svg width={120} height={10} aria-hidden="true">
                <rect width={120} height={10} fill="#e2e8f0" />
                <rect width={(120 * r.tokens) / max} height={10} fill={COLOURS[0]} />
              </svg>
            </td>
            <td className="num">{formatNumber(r.input_tokens)}</td>
            <td className="num">{formatNumber(r.output_tokens)}</td>
            <td className="num">{formatNumber(r.calls)}</td>
            <td className="num" data-testid="usage-cost">
              {formatCost(r.cost_usd)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
