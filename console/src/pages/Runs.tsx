/**
 * The run list (GET /api/v1/runs): filters live in the page URL (shareable), pages follow the Link header, and the
 * list refreshes by itself while any run on it may still change.
 */
import { useState, type FormEvent } from 'react';
import { get, getPage, type Page, ACTIVE_RUN_STATUSES, RUN_STATUSES, type RunSearchItem, type Workflow } from '../api';
import { ErrorNote, formatDate, formatDuration, formatNumber, StatusBadge, statusText } from '../format';
import { useInterval, useLoad } from '../hooks';
import { Link, navigate, useLocation } from '../router';

const PAGE_SIZE = 25;
const REFRESH_MS = 3000;

/** datetime-local value (local time) ↔ ISO instant. */
function toIso(local: string): string | null {
  if (!local) return null;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function toLocal(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function firstPagePath(query: URLSearchParams): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const key of ['status', 'workflow_id', 'created_after', 'created_before']) {
    const v = query.get(key);
    if (v) params.set(key, v);
  }
  return `/runs?${params.toString()}`;
}

export function Runs() {
  const { query } = useLocation();
  const first = firstPagePath(query);
  // The pages walked so far (for Previous); reset whenever the filters change.
  const [trail, setTrail] = useState<{ first: string; pages: string[] }>({ first, pages: [first] });
  const pages = trail.first === first ? trail.pages : [first];
  const current = pages[pages.length - 1] ?? first;
  const list = useLoad<Page<RunSearchItem>>((signal) => getPage<RunSearchItem>(current, signal), [current]);
  const active = (list.data?.items ?? []).some((r) => ACTIVE_RUN_STATUSES.includes(r.status));
  useInterval(list.reload, REFRESH_MS, active);

  return (
    <main id="main">
      <h1>Runs</h1>
      <RunFilters query={query} />
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          <table className="runs" aria-label="Runs" data-testid="runs-table">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Workflow</th>
                <th scope="col">Run</th>
                <th scope="col">Created</th>
                <th scope="col">Duration</th>
                <th scope="col" className="num">
                  Tokens
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.run_id} data-testid="run-row" data-run-id={r.run_id} data-status={r.status}>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>
                    <Link to={`/workflows/${r.workflow_id}`}>{r.workflow_name}</Link>
                  </td>
                  <td>
                    <Link
                      to={`/runs/${r.run_id}`}
                      className="mono"
                      aria-label={`Run ${r.run_id}, ${statusText(r.status)}`}
                    >
                      {r.run_id}
                    </Link>
                  </td>
                  <td>{formatDate(r.created_at)}</td>
                  <td>{formatDuration(r.duration_ms)}</td>
                  <td className="num">{formatNumber(r.usage.input_tokens + r.usage.output_tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.items.length === 0 && <p className="empty">No runs match.</p>}
          <nav className="pager" aria-label="Pages">
            <button
              type="button"
              disabled={pages.length <= 1}
              onClick={() => setTrail({ first, pages: pages.slice(0, -1) })}
            >
              Previous page
            </button>
            <span>Page {pages.length}</span>
            <button
              type="button"
              disabled={!list.data.next}
              onClick={() => list.data?.next && setTrail({ first, pages: [...pages, list.data.next] })}
            >
              Next page
            </button>
            {active && <span className="muted">Refreshing while runs are active</span>}
          </nav>
        </>
      )}
    </main>
  );
}

function RunFilters({ query }: { query: URLSearchParams }) {
  const [statuses, setStatuses] = useState<string[]>(() => (query.get('status') ?? '').split(',').filter(Boolean));
  const [workflow, setWorkflow] = useState(query.get('workflow_id') ?? '');
  const [after, setAfter] = useState(toLocal(query.get('created_after')));
  const [before, setBefore] = useState(toLocal(query.get('created_before')));
  const workflows = useLoad((signal) => get<Workflow[]>('/workflows?limit=200', signal), []);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const params = new URLSearchParams();
    if (statuses.length) params.set('status', statuses.join(','));
    if (workflow) params.set('workflow_id', workflow);
    const a = toIso(after);
    const b = toIso(before);
    if (a) params.set('created_after', a);
    if (b) params.set('created_before', b);
    const qs = params.toString();
    navigate(qs ? `/runs?${qs}` : '/runs', { replace: true });
  };
  const clear = () => {
    setStatuses([]);
    setWorkflow('');
    setAfter('');
    setBefore('');
    navigate('/runs', { replace: true });
  };

  return (
    <form className="filters" onSubmit={apply} aria-label="Filter runs">
      <fieldset>
        <legend>Status</legend>
        {RUN_STATUSES.map((s) => (
          <label key={s} className="check">
            <input
              type="checkbox"
              name="status"
              value={s}
              checked={statuses.includes(s)}
              onChange={(e) => setStatuses(e.target.checked ? [...statuses, s] : statuses.filter((x) => x !== s))}
            />
            {statusText(s)}
          </label>
        ))}
      </fieldset>
      <div className="filter-fields">
        <label>
          Workflow
          <select value={workflow} onChange={(e) => setWorkflow(e.target.value)} name="workflow_id">
            <option value="">All workflows</option>
            {(workflows.data ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
            {workflow && !(workflows.data ?? []).some((w) => w.id === workflow) && (
              <option value={workflow}>{workflow}</option>
            )}
          </select>
        </label>
        <label>
          Created after
          <input type="datetime-local" value={after} onChange={(e) => setAfter(e.target.value)} />
        </label>
        <label>
          Created before
          <input type="datetime-local" value={before} onChange={(e) => setBefore(e.target.value)} />
        </label>
        <div className="buttons">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button type="button" onClick={clear}>
            Clear
          </button>
        </div>
      </div>
    </form>
  );
}
