/**
 * The API key of this browser tab. It lives in sessionStorage only (gone when the tab closes) and nowhere else; the
 * console keeps no other storage, so signing out or switching keys leaves nothing of the previous user behind.
 */
const KEY = 'stepwise.apiKey';

type Listener = (key: string | null, reason: string | null) => void;
const listeners = new Set<Listener>();

export function currentKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(key: string): void {
  sessionStorage.setItem(KEY, key);
  for (const l of listeners) l(key, null);
}

/** Forgets the key (sign-out, or a 401 from any call: then `reason` says why on the sign-in page). */
export function signOut(reason: string | null = null): void {
  sessionStorage.removeItem(KEY);
  for (const l of listeners) l(null, reason);
}

export function onKeyChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
