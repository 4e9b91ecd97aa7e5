/**
 * Charts of a comparison: bars in groups, the baseline's and the candidate's side by side in each (a histogram's bins,
 * or items). Plain SVG like the usage page's chart, with a text title on every bar and the numbers in the tables
 * beside them, so nothing is told by colour or shape alone.
 */
import { formatNumber } from './format';

export const BASELINE_COLOUR = '#94a3b8';
export const CANDIDATE_COLOUR = '#2563eb';

export interface BarGroup {
  label: string;
  baseline: number | null;
  candidate: number | null;
}

export function PairedBars({
  groups,
  title,
  unit,
  format = formatNumber,
  testId,
}: {
  groups: BarGroup[];
  title: string;
  unit: string;
  format?: (n: number) => string;
  testId: string;
}) {
  const max = Math.max(Number.MIN_VALUE, ...groups.flatMap((g) => [g.baseline ?? 0, g.candidate ?? 0]));
  const width = 720;
  const height = 180;
  const left = 64;
  const bottom = 24;
  const slot = (width - left) / Math.max(1, groups.length);
  const bar = Math.max(1, (slot * 0.8) / 2);
  const h = (v: number) => ((height - bottom) * v) / max;
  const labelEvery = Math.max(1, Math.ceil(groups.length / 12));
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={title} data-testid={testId}>
        <line x1={left} x2={width} y1={height - bottom} y2={height - bottom} stroke="currentColor" strokeWidth={1} />
        <text x={left - 6} y={10} textAnchor="end" fontSize={11} fill="currentColor">
          {format(max)}
        </text>
        <text x={left - 6} y={height - bottom} textAnchor="end" fontSize={11} fill="currentColor">
          0
        </text>
        {groups.map((g, i) => {
          const x = left + i * slot + slot * 0.1;
          return (
            <g key={g.label} data-testid={`${testId}-group`} data-label={g.label}>
              {(['baseline', 'candidate'] as const).map((side, k) => {
                const v = g[side];
                if (v === null) return null;
                return (
                  <rect
                    key={side}
                    data-side={side}
                    data-value={v}
                    x={x + k * bar}
                    y={height - bottom - h(v)}
                    width={bar}
                    height={h(v)}
                    fill={side === 'baseline' ? BASELINE_COLOUR : CANDIDATE_COLOUR}
                  >
                    <title>{`${g.label} · ${side}: ${format(v)} ${unit}`}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 && (
                <text x={x + bar} y={height - 6} textAnchor="middle" fontSize={10} fill="currentColor">
                  {g.label.length > 12 ? `${g.label.slice(0, 11)}…` : g.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="usage-legend">
        {(
          [
            ['Baseline', BASELINE_COLOUR],
            ['Candidate', CANDIDATE_COLOUR],
          ] as const
        ).map(([label, colour]) => (
          <span key={label}>
            <svg width={10} height={10} aria-hidden="true">
              <rect width={10} height={10} fill={colour} />
            </svg>{' '}
            {label}
          </span>
        ))}
        <span className="muted">{title}</span>
      </figcaption>
    </figure>
  );
}
