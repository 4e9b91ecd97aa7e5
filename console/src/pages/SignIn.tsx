/** The sign-in page: an API key, checked against the API before it is kept (sessionStorage, this tab only). */
import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../api';
import { signIn } from '../session';

export function SignIn({ notice }: { notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) return;
    setBusy(true);
    setError(null);
    try {
      // Any authenticated read proves the key; the approvals inbox is small.
      const res = await fetch('/api/v1/approvals?limit=1', {
        headers: { Authorization: `Bearer ${trimmed}` },
        cache: 'no-store',
      });
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        throw new ApiError(
          body.error ?? `${res.status} ${res.statusText}`,
          res.status,
          res.headers.get('X-Error-Code'),
        );
      }
      signIn(trimmed);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin" id="main">
      <form onSubmit={(e) => void submit(e)} className="card signin-card" aria-labelledby="signin-title">
        <h1 id="signin-title">Stepwise console</h1>
        <p>Sign in with your API key. It is kept in this browser tab only and forgotten when you sign out.</p>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          required
          autoFocus
          data-testid="api-key"
        />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
