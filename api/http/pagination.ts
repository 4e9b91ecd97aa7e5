/**
 * Paging of every list endpoint over HTTP: `?limit=` (1–200, default 50) and an `?cursor=` (a position, db/paging.ts); the next page is
 * announced with `Link: <absolute url>; rel="next"` (built from PUBLIC_URL, else the request's origin), keeping the
 * caller's other query parameters (filters) and replacing only `cursor`. The query itself is db/paging.ts.
 *
 * ```ts
 * const list = validate({ query: pageQuery.extend({ status: z.enum([...]).optional() }) });
 * router.get('/workflows', ...authenticated(deps), list, async (ctx) => {
 *   const { query } = list.input(ctx);
 *   const docs = await paginate(ctx, { collection: workflowsCollection(deps.db), filter: { owner_id: user.id },
 *     page: query, order: { sortField: 'created_at', direction: -1 }, baseUrl: deps.config.PUBLIC_URL });
 *   respond(ctx, 200, docs.map(presentWorkflow));
 * });
 * ```
 */
import type { Context } from 'koa';
import type { Collection, Filter } from 'mongodb';
import { z } from 'zod';
import {
  CURSOR_PATTERN,
  findPage,
  InvalidCursorError,
  type Page,
  type PageOrder,
  type PageRequest,
} from '../../db/paging';
import { baseUrlOf } from './caller';
import { BadRequestError } from './errors';
import { queryInteger } from './query-integer';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** `?limit=`: 1–200, this default when absent; the description states the same default the schema has. */
export const pageLimit = (defaultSize: number) =>
  queryInteger({ min: 1, max: MAX_PAGE_SIZE, fallback: defaultSize }).meta({
    description: `Page size, 1–${MAX_PAGE_SIZE} (default ${defaultSize}).`,
  });

/** Query schema of a page request; `.extend()` it with the endpoint's filters (it stays strict). */
export const pageQuery = z.strictObject({
  limit: pageLimit(DEFAULT_PAGE_SIZE),
  cursor: z
    .string()
    .regex(CURSOR_PATTERN, 'invalid (take it from the Link header of the previous page)')
    .optional()
    .meta({
      description:
        'Position after which the page starts, taken from the `Link: <…>; rel="next"` header of the previous page.',
    }),
});

export interface PaginateOptions<T extends { _id: string }> {
  collection: Collection<T>;
  /** The caller's scope and filters (owner filter included). */
  filter: Filter<T>;
  page: PageRequest;
  order?: PageOrder;
  /** A MongoDB projection (e.g. leave out large fields the list does not show). */
  projection?: Record<string, 0 | 1>;
  /** PUBLIC_URL from the configuration; without it the Link header uses the request's own origin. */
  baseUrl?: string | undefined;
}

/** One page of documents; sets the `Link` header when there is a next page. A bad cursor is a 400. */
export async function paginate<T extends { _id: string }>(ctx: Context, opts: PaginateOptions<T>): Promise<T[]> {
  const page = await pageOrBadRequest(() =>
    findPage(opts.collection, opts.filter, opts.page, opts.order, opts.projection),
  );
  setNextLink(ctx, page.nextCursor, opts.baseUrl);
  return page.items;
}

/** Runs a repository's paged query, mapping a bad cursor to `400 cursor: invalid`. */
export async function pageOrBadRequest<T>(query: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await query();
  } catch (err) {
    if (err instanceof InvalidCursorError) {
      throw new BadRequestError('cursor: invalid (take it from the Link header of the previous page)', 'invalid_field');
    }
    throw err;
  }
}

/** Sets `Link: <…>; rel="next"` when there is a next page (for repositories that return a Page themselves). */
export function setNextLink(ctx: Context, nextCursor: string | null, baseUrl: string | undefined): void {
  if (nextCursor === null) return;
  ctx.set('Link', `<${nextPageUrl(ctx, baseUrl, nextCursor)}>; rel="next"`);
}

function nextPageUrl(ctx: Context, baseUrl: string | undefined, cursor: string): string {
  const base = baseUrlOf(baseUrl, ctx).replace(/\/+$/, '');
  const url = new URL(`${base}${ctx.path}`);
  for (const [key, value] of Object.entries(ctx.query)) {
    if (key === 'cursor' || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v);
  }
  url.searchParams.set('cursor', cursor);
  return url.toString();
}
