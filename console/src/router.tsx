/**
 * Routing with the History API under /console/ (no hash), so every page has a real URL that can be bookmarked and
 * shared; the server answers any /console/* path with index.html.
 */
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export const BASE = '/console';

const NAVIGATE = 'stepwise:navigate';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(NAVIGATE, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(NAVIGATE, onChange);
  };
}

function snapshot(): string {
  return window.location.pathname + window.location.search;
}

/** The path inside the console (`/runs/run_…`) with its query string. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const full = useSyncExternalStore(subscribe, snapshot);
  const [pathname = '', search = ''] = full.split('?');
  const inner = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return { path: inner === '' ? '/' : inner.replace(/\/+$/, '') || '/', query: new URLSearchParams(search) };
}

export function href(to: string): string {
  return `${BASE}${to.startsWith('/') ? to : `/${to}`}`;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = href(to);
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAVIGATE));
  if (!options.replace) window.scrollTo(0, 0);
}

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a {...rest} href={href(to)} onClick={onClick} />;
}
