/** Small shared pieces of presentation: dates, durations, numbers, JSON, status badges and error messages. */
import type { ReactNode } from 'react';
import { StatusMark } from './status-mark';

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Duration between two instants; an open end counts up to now. */
export function span(start: string | null, end: string | null): number | null {
  if (!start) return null;
  return (end ? Date.parse(end) : Date.now()) - Date.parse(start);
}

export function formatNumber(n: number): string {
  return n.toLocaleString();
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function json(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      {json(value)}
    </pre>
  );
}

const STATUS_TEXT: Record<string, string> = {
  queued: 'Queued',
  pending: 'Pending',
  running: 'Running',
  waiting: 'Waiting',
  completed: 'Completed',
  failed: 'Failed',
  skipped: 'Skipped',
  cancelled: 'Cancelled',
  timed_out: 'Timed out',
};

export function statusText(status: string): string {
  return STATUS_TEXT[status] ?? status;
}

/** Status as text with a colour and a symbol: never colour alone. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge status-${status}`} data-testid="status" data-status={status}>
      <StatusMark status={status} className="badge-mark" />
      {statusText(status)}
    </span>
  );
}

export function ErrorNote({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="field-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
