/** A workflow, read-only: its graph (conditions, maps and loops as on a run page), its steps, and the Start-run form. */
import { useMemo } from 'react';
import { get, type Workflow } from '../api';
import { ErrorNote, formatDate, Json } from '../format';
import { dependencies, StepGraph, type GraphNode } from '../graph';
import { useLoad } from '../hooks';
import { Link } from '../router';
import { loadStepNames } from '../step-names';
import { StartForm } from './StartForm';

export function WorkflowPage({ workflowId }: { workflowId: string }) {
  const wf = useLoad((signal) => get<Workflow>(`/workflows/${encodeURIComponent(workflowId)}`, signal), [workflowId]);
  const data = wf.data?.id === workflowId ? wf.data : null;
  const steps = data?.steps ?? null;
  const names = useLoad((signal) => (steps ? loadStepNames(steps, signal) : Promise.resolve(null)), [steps]);
  const nodes = useMemo<GraphNode[]>(() => {
    if (!data) return [];
    const deps = dependencies(data.steps);
    return data.steps.map((s) => ({
      id: s.id,
      // Named as on a run page; the id until the names are read, or when a template is gone.
      subtitle: names.data?.get(s.id) ?? s.template_id ?? (s.workflow_id ? `workflow ${s.workflow_id}` : ''),
      dependsOn: deps.get(s.id) ?? [],
      when: s.when ?? null,
      repeat: s.map ? 'map' : s.loop ? 'loop' : null,
    }));
  }, [data, names.data]);

  if (!data) {
    return (
      <main id="main">
        <h1>Workflow {workflowId}</h1>
        <ErrorNote error={wf.error} />
        {!wf.error && <p aria-busy="true">Loading…</p>}
      </main>
    );
  }
  return (
    <main id="main" className="workflow-page" data-testid="workflow-page">
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / <span className="mono">{data.id}</span>
      </p>
      <h1>{data.name}</h1>
      {data.description && <p>{data.description}</p>}
      <p className="muted">
        Updated {formatDate(data.updated_at)} ·{' '}
        <Link to={`/runs?workflow_id=${encodeURIComponent(data.id)}`}>Its runs</Link>
      </p>
      <div className="workflow-body">
        <section className="card" aria-labelledby="def-graph">
          <h2 id="def-graph">Steps</h2>
          <StepGraph nodes={nodes} label={`Steps of ${data.name}`} />
          <ol className="step-list">
            {data.steps.map((s) => {
              const { id, ...rest } = s;
              return (
                <li key={id}>
                  <details>
                    <summary>
                      <span className="mono">{id}</span>
                      {s.when && <span className="muted"> · when {s.when}</span>}
                      {s.map && <span className="muted"> · map over {s.map.over}</span>}
                      {s.loop && <span className="muted"> · loop until {s.loop.until}</span>}
                    </summary>
                    <Json value={rest} label={`Definition of ${id}`} />
                  </details>
                </li>
              );
            })}
          </ol>
          <details>
            <summary>Workflow config</summary>
            <Json value={data.config} label="Workflow config" />
          </details>
        </section>
        <StartForm workflow={data} />
      </div>
    </main>
  );
}
