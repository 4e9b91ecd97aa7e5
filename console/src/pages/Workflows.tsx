/** The caller's workflows (GET /api/v1/workflows), paged. */
import type { Workflow } from '../api';
import { ErrorNote, formatDate } from '../format';
import { Link } from '../router';
import { usePagedList } from '../paging';

export function Workflows() {
  const { list, pager } = usePagedList<Workflow>('/workflows?limit=50');
  return (
    <main id="main">
      <h1>Workflows</h1>
      <ErrorNote error={list.error} />
      {list.data && list.data.items.length === 0 && (
        <p className="empty">No workflows yet: create one with the API or the CLI (see the README).</p>
      )}
      {list.data && list.data.items.length > 0 && (
        <table aria-label="Workflows">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Steps</th>
              <th scope="col">Description</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((w) => (
              <tr key={w.id} data-testid="workflow-row" data-workflow-id={w.id}>
                <td>
                  <Link to={`/workflows/${w.id}`}>{w.name}</Link>
                </td>
                <td>{w.steps.length}</td>
                <td>{w.description ?? '—'}</td>
                <td>{formatDate(w.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </main>
  );
}
