/**
 * A paged list read from the API (`?limit=` and the `Link: rel="next"` header): the pages visited so far, the current
 * one loaded, and the Previous / Next buttons. One copy for every list page, so paging works the same on all of them.
 */
import { useState, type ReactElement } from 'react';
import { getPage, type Page } from './api';
import { useLoad, type Loaded } from './hooks';

export interface PagedList<T> {
  list: Loaded<Page<T>>;
  /** The Previous / Next buttons (nothing when there is one page only). */
  pager: ReactElement | null;
}

export function usePagedList<T>(first: string): PagedList<T> {
  const [pages, setPages] = useState<string[]>([first]);
  const current = pages[pages.length - 1] ?? first;
  const list = useLoad<Page<T>>((signal) => getPage<T>(current, signal), [current]);
  const next = list.data?.next ?? null;
  const pager =
    pages.length > 1 || next ? (
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={pages.length <= 1} onClick={() => setPages(pages.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!next} onClick={() => next && setPages([...pages, next])}>
          Next page
        </button>
      </nav>
    ) : null;
  return { list, pager };
}

/** Every item of a paged list, up to `cap` (a comparison reads both experiments' results whole); `more` if cut. */
export async function readAll<T>(
  first: string,
  cap: number,
  signal: AbortSignal,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  let next: string | null = first;
  while (next && items.length < cap) {
    const page: Page<T> = await getPage<T>(next, signal);
    items.push(...page.items);
    next = page.next;
  }
  return { items: items.slice(0, cap), more: next !== null || items.length > cap };
}
