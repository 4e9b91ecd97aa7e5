/**
 * One dataset and its items at a version (`?version=N` in the page URL, default the latest): every version stays
 * readable as it was, so picking an older one shows exactly the items an experiment pinned to it saw.
 */
import { get, type Dataset, type DatasetItem, type DatasetVersion } from '../api';
import { ErrorNote, formatDate, Json } from '../format';
import { useLoad } from '../hooks';
import { Link, navigate, useLocation } from '../router';
import { usePagedList } from '../paging';

const PAGE_SIZE = 50;

export function DatasetPage({ datasetId }: { datasetId: string }) {
  const { query } = useLocation();
  const asked = query.get('version');
  const base = `/datasets/${encodeURIComponent(datasetId)}`;
  const ds = useLoad((signal) => get<Dataset>(base, signal), [datasetId]);
  const versions = useLoad((signal) => get<DatasetVersion[]>(`${base}/versions?limit=200`, signal), [datasetId]);
  const data = ds.data?.id === datasetId ? ds.data : null;
  const version = asked !== null && /^\d+$/.test(asked) ? Number(asked) : (data?.version ?? null);

  if (!data || version === null) {
    return (
      <main id="main">
        <h1>Dataset {datasetId}</h1>
        <ErrorNote error={ds.error} />
        {!ds.error && <p aria-busy="true">Loading…</p>}
      </main>
    );
  }
  // The versions list holds the newest 200; a version older than those is still shown when asked for.
  const options = (versions.data ?? []).map((v) => ({
    value: v.version,
    label: `${v.version} — ${v.change.replace('_', ' ')}, ${v.item_count} items`,
  }));
  if (!options.some((o) => o.value === version)) options.push({ value: version, label: String(version) });
  const pick = (v: string) => navigate(`/datasets/${datasetId}?version=${v}`, { replace: true });
  return (
    <main id="main" data-testid="dataset-page" data-version={version}>
      <p className="crumbs">
        <Link to="/datasets">Datasets</Link> / <span className="mono">{data.id}</span>
      </p>
      <h1>{data.name}</h1>
      {data.description && <p>{data.description}</p>}
      <p className="muted">
        Latest version {data.version} · {data.item_count} items · updated {formatDate(data.updated_at)}
        {data.workflow_id && (
          <>
            {' '}
            · for <Link to={`/workflows/${data.workflow_id}`}>{data.workflow_id}</Link>
          </>
        )}
      </p>
      <p>
        <label>
          Version{' '}
          <select value={String(version)} onChange={(e) => pick(e.target.value)} data-testid="version-select">
            {options.map((o) => (
              <option key={o.value} value={String(o.value)}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
      </p>
      <ErrorNote error={versions.error} />
      {/* Keyed by version: a new version starts again from its first page. */}
      <Items key={version} base={base} version={version} />
    </main>
  );
}

function Items({ base, version }: { base: string; version: number }) {
  const first = `${base}/items?limit=${PAGE_SIZE}&version=${version}`;
  const { list, pager } = usePagedList<DatasetItem>(first);
  return (
    <section aria-labelledby="items-title">
      <h2 id="items-title">Items in version {version}</h2>
      <ErrorNote error={list.error} />
      {list.data && list.data.items.length === 0 && <p className="empty">No items in this version.</p>}
      {list.data && list.data.items.length > 0 && (
        <table aria-label={`Items in version ${version}`} data-testid="items-table">
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col">Input</th>
              <th scope="col">Expected</th>
              <th scope="col">Source run</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((i) => (
              <tr key={i.id} data-testid="item-row" data-item-id={i.id}>
                <td className="mono">{i.id}</td>
                <td>
                  <Json value={i.input} label={`Input of ${i.id}`} />
                </td>
                <td>{i.expected === null ? '—' : <Json value={i.expected} label={`Expected of ${i.id}`} />}</td>
                <td>
                  {i.source_run_id ? (
                    <Link to={`/runs/${i.source_run_id}`} className="mono">
                      {i.source_run_id}
                    </Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  v{i.added_in}
                  {i.removed_in !== null && <span className="muted"> (changed in v{i.removed_in})</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </section>
  );
}
