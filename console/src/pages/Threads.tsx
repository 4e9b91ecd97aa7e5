/**
 * Threads (GET /api/v1/threads): the caller's conversations with an agent, newest first, and a form that starts a new
 * one on an agent template (POST /api/v1/threads) and opens its chat view.
 */
import { useState, type FormEvent } from 'react';
import { errorMessage, getPage, post, type Page, type Template, type Thread } from '../api';
import { ErrorNote, formatDate, formatNumber } from '../format';
import { useLoad } from '../hooks';
import { Link, navigate } from '../router';

async function agentTemplates(signal: AbortSignal): Promise<Template[]> {
  const out: Template[] = [];
  let next: string | null = '/agents?step_type=agent&limit=200';
  for (let i = 0; next && i < 10; i++) {
    const page: Page<Template> = await getPage<Template>(next, signal);
    out.push(...page.items);
    next = page.next;
  }
  return out;
}

function NewThread() {
  const templates = useLoad(agentTemplates, []);
  const [template, setTemplate] = useState('');
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const chosen = template || templates.data?.[0]?.id || '';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await post<Thread>('/threads', {
        template: chosen,
        ...(title.trim() ? { title: title.trim() } : {}),
      });
      navigate(`/threads/${created.id}`);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };

  return (
    <form className="card new-thread" onSubmit={(e) => void submit(e)} aria-label="New thread" data-testid="new-thread">
      <h2>New thread</h2>
      <ErrorNote error={templates.error} />
      <div className="new-thread-fields">
        <label>
          Agent
          <select value={chosen} onChange={(e) => setTemplate(e.target.value)} data-testid="new-thread-template">
            {(templates.data ?? []).map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Title (optional)
          <input
            value={title}
            maxLength={200}
            onChange={(e) => setTitle(e.target.value)}
            data-testid="new-thread-title"
          />
        </label>
        <button type="submit" disabled={busy || !chosen} data-testid="new-thread-button">
          Start chatting
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

export function Threads() {
  const [pages, setPages] = useState<string[]>(['/threads?limit=50']);
  const current = pages[pages.length - 1] ?? '/threads?limit=50';
  const list = useLoad<Page<Thread>>((signal) => getPage<Thread>(current, signal), [current]);

  return (
    <main id="main">
      <h1>Threads</h1>
      <NewThread />
      <ErrorNote error={list.error} />
      {list.data && list.data.items.length === 0 && <p>No threads yet: start one above.</p>}
      {list.data && list.data.items.length > 0 && (
        <table className="runs" aria-label="Threads" data-testid="threads-table">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Agent</th>
              <th scope="col" className="num">
                Turns
              </th>
              <th scope="col">Updated</th>
              <th scope="col" className="num">
                Tokens
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((t) => (
              <tr key={t.id} data-testid="thread-row" data-thread-id={t.id}>
                <td>
                  <Link to={`/threads/${t.id}`}>{t.title ?? t.id}</Link>
                  {t.running_turn && <span className="muted"> · answering</span>}
                </td>
                <td>{t.template_name}</td>
                <td className="num">{formatNumber(t.turns)}</td>
                <td>{formatDate(t.updated_at)}</td>
                <td className="num">{formatNumber(t.usage.input_tokens + t.usage.output_tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages((p) => p.slice(0, -1))}>
            Previous
          </button>
        )}
        {list.data?.next && (
          <button type="button" onClick={() => setPages((p) => [...p, list.data!.next!])}>
            Next
          </button>
        )}
      </div>
    </main>
  );
}
