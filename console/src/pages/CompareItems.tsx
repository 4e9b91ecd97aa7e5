/**
 * The items of a comparison (console/src/pages/Compare.tsx), filtered by their change, each with its scores on both
 * sides and its expected, baseline and candidate outputs side by side (repetition 0 of each; a failed run shows why);
 * for an item the candidate replayed, which steps were answered from the recorded run and which ran again.
 */
import { useState } from 'react';
import type { Comparison, DatasetItem, ExperimentResult } from '../api';
import { Json } from '../format';

/** One side's results as read (the first READ_CAP of them; `more` when there were more). */
export type Side = { results: ExperimentResult[]; more: boolean };

export const fixed = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toFixed(3));

export function byItem(results: ExperimentResult[]): Map<string, ExperimentResult[]> {
  const out = new Map<string, ExperimentResult[]>();
  for (const r of results) out.set(r.item_id, [...(out.get(r.item_id) ?? []), r]);
  return out;
}

const CHANGES = ['all', 'regressed', 'improved', 'mixed', 'unchanged', 'only_baseline', 'only_candidate'] as const;

export function CompareItems({
  comparison,
  sides,
  expected,
}: {
  comparison: Comparison;
  sides: { baseline: Side; candidate: Side } | null;
  expected: DatasetItem[] | null;
}) {
  const [filter, setFilter] = useState<(typeof CHANGES)[number]>('all');
  const [open, setOpen] = useState<string | null>(null);
  const b = byItem(sides?.baseline.results ?? []);
  const c = byItem(sides?.candidate.results ?? []);
  const exp = new Map((expected ?? []).map((i) => [i.id, i.expected]));
  const shown = comparison.items.filter((i) => filter === 'all' || i.change === filter);
  const output = (r: ExperimentResult[] | undefined) => (r?.[0] ? (r[0].error ?? r[0].output) : undefined);
  return (
    <section aria-labelledby="items-title">
      <h2 id="items-title">Items</h2>
      <p>
        <label>
          Show{' '}
          <select
            value={filter}
            onChange={(e) => setFilter(e.target.value as typeof filter)}
            data-testid="change-filter"
          >
            {CHANGES.map((ch) => (
              <option key={ch} value={ch}>
                {ch.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
      </p>
      <table aria-label="Items compared" data-testid="compare-items">
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Change</th>
            <th scope="col">Scores (baseline → candidate)</th>
            <th scope="col">Outputs</th>
          </tr>
        </thead>
        <tbody>
          {shown.flatMap((i) => {
            const rows = [
              <tr key={i.item_id} data-testid="compare-item" data-item-id={i.item_id} data-change={i.change}>
                <td className="mono">{i.item_id}</td>
                <td>
                  <span className={`badge change-${i.change}`}>{i.change.replace('_', ' ')}</span>
                </td>
                <td>
                  {i.scorers.map((s) => (
                    <div key={s.name}>
                      <span className="mono">{s.name}</span> {fixed(s.baseline)} → {fixed(s.candidate)}
                    </div>
                  ))}
                </td>
                <td>
                  <button
                    type="button"
                    aria-expanded={open === i.item_id}
                    onClick={() => setOpen(open === i.item_id ? null : i.item_id)}
                  >
                    {open === i.item_id ? 'Hide' : 'Show'} outputs
                  </button>
                </td>
              </tr>,
            ];
            if (open === i.item_id) {
              rows.push(
                <tr key={`${i.item_id}-outputs`} data-testid="item-outputs">
                  <td colSpan={4}>
                    <div className="side-by-side">
                      {(
                        [
                          ['Expected', exp.get(i.item_id)],
                          ['Baseline', output(b.get(i.item_id))],
                          ['Candidate', output(c.get(i.item_id))],
                        ] as const
                      ).map(([label, value]) => (
                        <div key={label}>
                          <h3>{label}</h3>
                          {value === undefined || value === null ? (
                            <p className="empty">—</p>
                          ) : (
                            <Json value={value} label={`${label} output of ${i.item_id}`} />
                          )}
                        </div>
                      ))}
                    </div>
                    {i.replay ? <ReplaySteps replay={i.replay} itemId={i.item_id} /> : null}
                  </td>
                </tr>,
              );
            }
            return rows;
          })}
        </tbody>
      </table>
    </section>
  );
}

/** A replayed item's steps: replayed from the record, or executed (and whether the output changed from the record). */
function ReplaySteps({
  replay,
  itemId,
}: {
  replay: NonNullable<Comparison['items'][number]['replay']>;
  itemId: string;
}) {
  return (
    <div data-testid="replay-steps">
      <h3>
        Replayed from <span className="mono">{replay.source_run_id}</span>
      </h3>
      <ul aria-label={`Steps of ${itemId} against its recorded run`}>
        {replay.steps.map((step) => (
          <li key={step.step_id} data-step-id={step.step_id} data-how={step.how}>
            <span className="mono">{step.step_id}</span> {step.how}
            {step.how === 'executed' ? (step.changed ? ', output changed' : ', output unchanged') : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
