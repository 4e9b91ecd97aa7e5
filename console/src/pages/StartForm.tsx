/**
 * The Start-run form, generated from the workflow's `config.input_schema`: string, number, integer, boolean, enum and
 * array-of-strings properties get their own inputs; anything else a JSON field. Without a usable object schema the
 * whole input is one JSON field. The server validates the input against the schema again.
 */
import { useId, useState, type FormEvent } from 'react';
import { errorMessage, post, type StartedRun, type Workflow } from '../api';
import { navigate } from '../router';

interface Prop {
  type?: string | string[];
  enum?: unknown[];
  items?: { type?: string };
  description?: string;
  title?: string;
  default?: unknown;
}

type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'strings' | 'json';

function kindOf(p: Prop): Kind {
  if (Array.isArray(p.enum) && p.enum.length > 0) return 'enum';
  const t = Array.isArray(p.type) ? p.type.find((x) => x !== 'null') : p.type;
  switch (t) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
      return t;
    case 'array':
      return p.items?.type === 'string' ? 'strings' : 'json';
    case undefined:
    default:
      return 'json';
  }
}

function initialValue(p: Prop, kind: Kind): string {
  const d = p.default;
  if (d === undefined) return kind === 'boolean' ? 'false' : '';
  if (kind === 'strings' && Array.isArray(d)) return d.join('\n');
  if (kind === 'json' || kind === 'enum' || typeof d !== 'string') return JSON.stringify(d);
  return d;
}

/** One form value → its JSON value; undefined leaves an optional field out. */
function parseValue(name: string, kind: Kind, raw: string, p: Prop): unknown {
  switch (kind) {
    case 'string':
      return raw === '' ? undefined : raw;
    case 'number':
    case 'integer': {
      if (raw.trim() === '') return undefined;
      const n = Number(raw);
      if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n)))
        throw new Error(`${name}: a${kind === 'integer' ? 'n integer' : ' number'}`);
      return n;
    }
    case 'boolean':
      return raw === 'true';
    case 'enum':
      return raw === '' ? undefined : (p.enum ?? []).find((v) => JSON.stringify(v) === raw);
    case 'strings': {
      const lines = raw
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean);
      return lines.length ? lines : undefined;
    }
    case 'json':
      if (raw.trim() === '') return undefined;
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
  }
}

export function StartForm({ workflow }: { workflow: Workflow }) {
  const id = useId();
  const schema = workflow.config.input_schema as
    { type?: string; properties?: Record<string, Prop>; required?: string[] } | undefined;
  const props = schema?.properties && typeof schema.properties === 'object' ? Object.entries(schema.properties) : null;
  const required = new Set(schema?.required ?? []);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries((props ?? []).map(([name, p]) => [name, initialValue(p, kindOf(p))])),
  );
  const [raw, setRaw] = useState('{}');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    let input: Record<string, unknown>;
    try {
      if (props) {
        input = {};
        for (const [name, p] of props) {
          const v = parseValue(name, kindOf(p), values[name] ?? '', p);
          if (v !== undefined) input[name] = v;
        }
      } else {
        const parsed = JSON.parse(raw) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('input: a JSON object');
        input = parsed as Record<string, unknown>;
      }
    } catch (err) {
      setError(err instanceof SyntaxError ? `input: not valid JSON (${err.message})` : errorMessage(err));
      return;
    }
    setBusy(true);
    try {
      const started = await post<StartedRun>(`/workflows/${encodeURIComponent(workflow.id)}/run`, { input });
      navigate(`/runs/${started.run_id}`);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };

  const set = (name: string, v: string) => setValues((s) => ({ ...s, [name]: v }));

  return (
    <form
      className="card start-form"
      onSubmit={(e) => void submit(e)}
      aria-labelledby={`${id}-title`}
      data-testid="start-form"
    >
      <h2 id={`${id}-title`}>Start a run</h2>
      {props ? (
        props.length === 0 ? (
          <p className="muted">This workflow takes no input.</p>
        ) : (
          props.map(([name, p]) => {
            const kind = kindOf(p);
            const fid = `${id}-${name}`;
            const label = (
              <>
                {p.title ?? name}
                {required.has(name) ? <span aria-hidden="true"> *</span> : <span className="muted"> (optional)</span>}
              </>
            );
            const help = p.description ? <small id={`${fid}-help`}>{p.description}</small> : null;
            const described = p.description ? `${fid}-help` : undefined;
            const value = values[name] ?? '';
            switch (kind) {
              case 'boolean':
                return (
                  <div key={name} className="form-field">
                    <label className="check">
                      <input
                        type="checkbox"
                        id={fid}
                        name={name}
                        checked={value === 'true'}
                        onChange={(e) => set(name, String(e.target.checked))}
                        aria-describedby={described}
                      />
                      {label}
                    </label>
                    {help}
                  </div>
                );
              case 'enum':
                return (
                  <div key={name} className="form-field">
                    <label htmlFor={fid}>{label}</label>
                    <select
                      id={fid}
                      name={name}
                      value={value}
                      onChange={(e) => set(name, e.target.value)}
                      required={required.has(name)}
                      aria-describedby={described}
                    >
                      <option value="">—</option>
                      {(p.enum ?? []).map((v) => (
                        <option key={JSON.stringify(v)} value={JSON.stringify(v)}>
                          {typeof v === 'string' ? v : JSON.stringify(v)}
                        </option>
                      ))}
                    </select>
                    {help}
                  </div>
                );
              case 'strings':
              case 'json':
                return (
                  <div key={name} className="form-field">
                    <label htmlFor={fid}>
                      {label} <span className="muted">{kind === 'strings' ? '(one per line)' : '(JSON)'}</span>
                    </label>
                    <textarea
                      id={fid}
                      name={name}
                      rows={3}
                      value={value}
                      onChange={(e) => set(name, e.target.value)}
                      required={required.has(name)}
                      aria-describedby={described}
                    />
                    {help}
                  </div>
                );
              case 'string':
              case 'number':
              case 'integer':
                return (
                  <div key={name} className="form-field">
                    <label htmlFor={fid}>{label}</label>
                    <input
                      id={fid}
                      name={name}
                      type={kind === 'string' ? 'text' : 'number'}
                      step={kind === 'integer' ? 1 : 'any'}
                      value={value}
                      onChange={(e) => set(name, e.target.value)}
                      required={required.has(name)}
                      aria-describedby={described}
                    />
                    {help}
                  </div>
                );
            }
          })
        )
      ) : (
        <div className="form-field">
          <label htmlFor={`${id}-raw`}>Input (JSON object)</label>
          <textarea id={`${id}-raw`} rows={6} value={raw} onChange={(e) => setRaw(e.target.value)} className="mono" />
        </div>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy} data-testid="start-run">
        Start run
      </button>
    </form>
  );
}
