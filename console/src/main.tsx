/**
 * The Stepwise console: a single-page app over the public API (served at /console by the API process). Everything
 * below the sign-in is keyed by the API key, so switching keys remounts the app and nothing read with one key is
 * ever shown under another.
 */
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { Link, navigate, useLocation } from './router';
import { currentKey, onKeyChange, signOut } from './session';
import { Approvals } from './pages/Approvals';
import { Catalog } from './pages/Catalog';
import { DatasetPage } from './pages/Dataset';
import { Datasets } from './pages/Datasets';
import { ComparePage } from './pages/Compare';
import { ExperimentPage } from './pages/Experiment';
import { Experiments } from './pages/Experiments';
import { RunPage } from './pages/Run';
import { Runs } from './pages/Runs';
import { SignIn } from './pages/SignIn';
import { Usage } from './pages/Usage';
import { ThreadPage } from './pages/Thread';
import { Threads } from './pages/Threads';
import { WorkflowPage } from './pages/Workflow';
import { Workflows } from './pages/Workflows';

const NAV = [
  { to: '/runs', label: 'Runs' },
  { to: '/threads', label: 'Threads' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/workflows', label: 'Workflows' },
  { to: '/datasets', label: 'Datasets' },
  { to: '/experiments', label: 'Experiments' },
  { to: '/catalog', label: 'Templates & tools' },
  { to: '/usage', label: 'Usage' },
] as const;

function Page({ path }: { path: string }) {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [section, id] = parts;
  useEffect(() => {
    if (parts.length === 0) navigate('/runs', { replace: true });
  }, [parts.length]);
  if (parts.length === 0) return null;
  if (section === 'runs' && parts.length === 1) return <Runs />;
  if (section === 'runs' && id && parts.length === 2) return <RunPage runId={id} />;
  if (section === 'threads' && parts.length === 1) return <Threads />;
  if (section === 'threads' && id && parts.length === 2) return <ThreadPage threadId={id} />;
  if (section === 'approvals' && parts.length === 1) return <Approvals />;
  if (section === 'workflows' && parts.length === 1) return <Workflows />;
  if (section === 'workflows' && id && parts.length === 2) return <WorkflowPage workflowId={id} />;
  if (section === 'datasets' && parts.length === 1) return <Datasets />;
  if (section === 'datasets' && id && parts.length === 2) return <DatasetPage datasetId={id} />;
  if (section === 'experiments' && parts.length === 1) return <Experiments />;
  if (section === 'experiments' && id && parts.length === 2) return <ExperimentPage experimentId={id} />;
  if (section === 'experiments' && id && parts.length === 3 && parts[2] === 'compare')
    return <ComparePage experimentId={id} />;
  if (section === 'catalog' && parts.length === 1) return <Catalog />;
  if (section === 'usage' && parts.length === 1) return <Usage />;
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        There is no page at this address. <Link to="/runs">Go to the runs.</Link>
      </p>
    </main>
  );
}

function Shell() {
  const { path } = useLocation();
  const section = `/${path.split('/')[1] ?? ''}`;
  useEffect(() => {
    const label = NAV.find((n) => n.to === section)?.label;
    document.title = label ? `${label} · Stepwise` : 'Stepwise console';
  }, [section]);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Stepwise</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} aria-current={section === n.to ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="signout" onClick={() => signOut()} data-testid="sign-out">
          Sign out
        </button>
      </header>
      <Page path={path} />
    </>
  );
}

function App() {
  const [session, setSession] = useState<{ signedIn: boolean; generation: number; notice: string | null }>(() => ({
    signedIn: currentKey() !== null,
    generation: 0,
    notice: null,
  }));
  useEffect(
    () =>
      onKeyChange((key, reason) =>
        setSession((s) => ({ signedIn: key !== null, generation: s.generation + 1, notice: reason })),
      ),
    [],
  );
  if (!session.signedIn) return <SignIn notice={session.notice} />;
  // A new sign-in mounts a new tree: nothing read with the previous key survives.
  return <Shell key={session.generation} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
