/** Loading state for a page: one async read, re-run when its inputs change, with an optional periodic refresh. */
import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from './api';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(abort.signal).then(
      (data) => {
        if (!abort.signal.aborted) setState({ data, error: null, loading: false });
      },
      (err: unknown) => {
        if (!abort.signal.aborted) setState((s) => ({ data: s.data, error: errorMessage(err), loading: false }));
      },
    );
    return () => abort.abort();
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = window.setInterval(() => ref.current(), ms);
    return () => window.clearInterval(id);
  }, [ms, active]);
}
