/** The approvals inbox (GET /api/v1/approvals): every step waiting for the caller's decision, decided in place. */
import { useState } from 'react';
import type { Approval } from '../api';
import { DecisionForm } from '../Decision';
import { ErrorNote, formatDate } from '../format';
import { useInterval } from '../hooks';
import { Link } from '../router';
import { usePagedList } from '../paging';

export function Approvals() {
  const { list, pager } = usePagedList<Approval>('/approvals?limit=50');
  const [decided, setDecided] = useState<{ key: string; approved: boolean }[]>([]);
  useInterval(list.reload, 5000, true);

  return (
    <main id="main">
      <h1>Approvals</h1>
      <p className="muted">Steps waiting for your decision, oldest first.</p>
      <ErrorNote error={list.error} />
      <div role="status" className="sr-live">
        {decided.map((d) => (
          <p key={d.key} className="notice">
            {d.approved ? 'Approved' : 'Rejected'} {d.key}.
          </p>
        ))}
      </div>
      {list.data && list.data.items.length === 0 && <p className="empty">Nothing is waiting for you.</p>}
      <ul className="approvals">
        {(list.data?.items ?? []).map((a) => {
          const key = `${a.run_id}/${a.step_id}`;
          return (
            <li
              key={key}
              className="card approval"
              data-testid="approval"
              data-run-id={a.run_id}
              data-step-id={a.step_id}
            >
              <h2>
                {a.workflow_name} · <span className="mono">{a.step_id}</span>
              </h2>
              <p className="approval-message">{a.message}</p>
              {a.instructions && <p className="muted">{a.instructions}</p>}
              <p className="muted">
                Waiting since {formatDate(a.waiting_since)}
                {a.deadline ? ` · times out ${formatDate(a.deadline)}` : ''} ·{' '}
                <Link to={`/runs/${a.run_id}?step=${encodeURIComponent(a.step_id.replace(/[[#].*$/, ''))}`}>
                  Open run {a.run_id}
                </Link>
              </p>
              <DecisionForm
                runId={a.run_id}
                stepId={a.step_id}
                onDecided={(approved) => {
                  setDecided((d) => [...d, { key, approved }]);
                  list.reload();
                }}
              />
            </li>
          );
        })}
      </ul>
      {pager}
    </main>
  );
}
