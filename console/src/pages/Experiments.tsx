/** The caller's experiments (GET /api/v1/experiments), newest first, paged: status, dataset, progress, spend. */
import type { Experiment } from '../api';
import { ErrorNote, formatDate, formatNumber } from '../format';
import { usePagedList } from '../paging';
import { Link } from '../router';
import { ExperimentStatus } from './Experiment';

export function Experiments() {
  const { list, pager } = usePagedList<Experiment>('/experiments?limit=50');
  return (
    <main id="main">
      <h1>Experiments</h1>
      <ErrorNote error={list.error} />
      {list.data && list.data.items.length === 0 && (
        <p className="empty">
          No experiments yet: run one with the CLI (<code>eval run</code>) or the API (see docs/evals.md).
        </p>
      )}
      {list.data && list.data.items.length > 0 && (
        <table aria-label="Experiments" data-testid="experiments-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Dataset</th>
              <th scope="col" className="num">
                Runs
              </th>
              <th scope="col" className="num">
                Tokens
              </th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((e) => (
              <tr key={e.id} data-testid="experiment-row" data-experiment-id={e.id}>
                <td>
                  <Link to={`/experiments/${e.id}`}>{e.name}</Link>
                </td>
                <td>
                  <ExperimentStatus status={e.status} />
                </td>
                <td>
                  <Link to={`/datasets/${e.dataset_id}?version=${e.dataset_version}`} className="mono">
                    {e.dataset_id} v{e.dataset_version}
                  </Link>
                </td>
                <td className="num">
                  {e.progress.done} / {e.progress.total}
                </td>
                <td className="num">{formatNumber(e.spend.tokens)}</td>
                <td>{formatDate(e.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </main>
  );
}
