/** Templates (GET /api/v1/agents), agent tools and action types with their parameter schemas. */
import { get, getPage, type ActionInfo, type Template, type ToolInfo } from '../api';
import { ErrorNote, Json } from '../format';
import { useLoad } from '../hooks';

async function allTemplates(signal: AbortSignal): Promise<Template[]> {
  const out: Template[] = [];
  let next: string | null = '/agents?limit=200';
  // A handful of pages at most: templates are few (system ones plus the user's own).
  for (let i = 0; next && i < 10; i++) {
    const page: { items: Template[]; next: string | null } = await getPage<Template>(next, signal);
    out.push(...page.items);
    next = page.next;
  }
  return out;
}

export function Catalog() {
  const templates = useLoad(allTemplates, []);
  const tools = useLoad((signal) => get<ToolInfo[]>('/agents/tools', signal), []);
  const actions = useLoad((signal) => get<ActionInfo[]>('/agents/actions', signal), []);
  return (
    <main id="main">
      <h1>Templates, tools and actions</h1>
      <nav aria-label="On this page" className="toc">
        <a href="#templates">Templates</a> · <a href="#tools">Agent tools</a> · <a href="#actions">Action types</a>
      </nav>
      <section aria-labelledby="templates">
        <h2 id="templates">Templates</h2>
        <ErrorNote error={templates.error} />
        <ul className="catalog">
          {(templates.data ?? []).map((t) => (
            <li key={t.id} className="card" data-testid="template">
              <h3>
                {t.name} <span className="muted mono">{t.id}</span>
              </h3>
              <p>
                {t.step_type === 'agent' ? 'Agent' : `Action: ${t.action_type ?? ''}`}
                {t.system ? ' · system' : ' · yours'}
                {t.tags.length ? ` · ${t.tags.join(', ')}` : ''}
              </p>
              {t.short_description && <p className="muted">{t.short_description}</p>}
              <details>
                <summary>Details</summary>
                {t.step_type === 'agent' && (
                  <>
                    <h4>Prompt</h4>
                    <pre className="json">{t.default_prompt}</pre>
                    <p>Tools: {t.default_tools.join(', ') || 'none'}</p>
                    {t.default_tasks.length > 0 && (
                      <ol>
                        {t.default_tasks.map((task) => (
                          <li key={task}>{task}</li>
                        ))}
                      </ol>
                    )}
                    {t.output_schema && <Json value={t.output_schema} label={`Output schema of ${t.name}`} />}
                  </>
                )}
                <h4>Config</h4>
                <Json value={t.config} label={`Config of ${t.name}`} />
              </details>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="tools">
        <h2 id="tools">Agent tools</h2>
        <ErrorNote error={tools.error} />
        <ul className="catalog">
          {(tools.data ?? []).map((t) => (
            <li key={t.name} className="card" data-testid="tool">
              <h3 className="mono">{t.name}</h3>
              <p>{t.description}</p>
              <details>
                <summary>Parameters</summary>
                <Json value={t.parameters} label={`Parameters of ${t.name}`} />
              </details>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="actions">
        <h2 id="actions">Action types</h2>
        <ErrorNote error={actions.error} />
        <ul className="catalog">
          {(actions.data ?? []).map((a) => (
            <li key={a.name} className="card" data-testid="action">
              <h3 className="mono">{a.name}</h3>
              <p>{a.description}</p>
              <details>
                <summary>Config schema</summary>
                <Json value={a.config_schema} label={`Config schema of ${a.name}`} />
              </details>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
