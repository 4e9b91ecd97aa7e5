/** The caller's workflows (GET /api/v1/workflows), paged. */
import { useState } from 'react';
import { getPage, type Page, type Workflow } from '../api';
import { ErrorNote, formatDate } from '../format';
import { useLoad } from '../hooks';
import { Link } from '../router';

export function Workflows() {
  const [pages, setPages] = useState<string[]>(['/workflows?limit=50']);
  const current = pages[pages.length - 1] ?? '/workflows?limit=50';
  const list = useLoad<Page<Workflow>>((signal) => getPage<Workflow>(current, signal), [current]);
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
      {(pages.length > 1 || list.data?.next) && (
        <nav className="pager" aria-label="Pages">
          <button type="button" disabled={pages.length <= 1} onClick={() => setPages(pages.slice(0, -1))}>
            Previous page
          </button>
          <button
            type="button"
            disabled={!list.data?.next}
            onClick={() => list.data?.next && setPages([...pages, list.data.next])}
          >
            Next page
          </button>
        </nav>
      )}
    </main>
  );
}
