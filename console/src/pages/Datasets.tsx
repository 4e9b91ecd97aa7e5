/** The caller's datasets (GET /api/v1/datasets), newest first, paged: name, latest version, items, workflow. */
import type { Dataset } from '../api';
import { ErrorNote, formatDate, formatNumber } from '../format';
import { Link } from '../router';
import { usePagedList } from '../paging';

const FIRST = '/datasets?limit=50';

export function Datasets() {
  const { list, pager } = usePagedList<Dataset>(FIRST);
  return (
    <main id="main">
      <h1>Datasets</h1>
      <ErrorNote error={list.error} />
      {list.data && list.data.items.length === 0 && (
        <p className="empty">
          No datasets yet: make one with the CLI (<code>datasets create</code>) or the API (see docs/evals.md).
        </p>
      )}
      {list.data && list.data.items.length > 0 && (
        <table aria-label="Datasets" data-testid="datasets-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" className="num">
                Version
              </th>
              <th scope="col" className="num">
                Items
              </th>
              <th scope="col">Workflow</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((d) => (
              <tr key={d.id} data-testid="dataset-row" data-dataset-id={d.id}>
                <td>
                  <Link to={`/datasets/${d.id}`}>{d.name}</Link>
                </td>
                <td className="num">{d.version}</td>
                <td className="num">{formatNumber(d.item_count)}</td>
                <td>{d.workflow_id ? <Link to={`/workflows/${d.workflow_id}`}>{d.workflow_id}</Link> : '—'}</td>
                <td>{formatDate(d.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </main>
  );
}
