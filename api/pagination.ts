/**
 * Keyset paging for every list endpoint: `?limit=` (1–200, default 50) and an opaque `?cursor=`. The order is stable
 * — `(sortField, _id)` — so inserts and deletes between pages never repeat or skip an item that existed throughout.
 * The next page is announced with `Link: <absolute url>; rel="next"` (built from PUBLIC_URL, else the request origin),
 * keeping the caller's other query parameters (filters) and replacing only `cursor`.
 *
 * ```ts
 * const list = validate({ query: pageQuery.extend({ tag: z.string().optional() }) });
 * router.get('/agents', list, async (ctx) => {
 *   const { query } = list.input(ctx);
 *   const docs = await paginate(ctx, { collection, filter, page: query, baseUrl: deps.config.PUBLIC_URL });
 *   respond(ctx, 200, docs.map(presentTemplate));
 * });
 * ```
 */
import type { Context } from 'koa';
import type { Collection, Document, Filter, Sort } from 'mongodb';
import { z } from 'zod';
import { BadRequestError } from './errors';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Query schema of a page request; `.extend()` it with the endpoint's filters (and keep it strict). */
export const pageQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .meta({ description: `Page size, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .meta({ description: 'Opaque cursor from the `Link: <…>; rel="next"` header of the previous page.' }),
});

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/** Which field orders the list (ties broken by `_id`, always in the same direction). */
export type SortField = '_id' | 'created_at';

export interface PaginateOptions<T extends { _id: string }> {
  collection: Collection<T>;
  /** The caller's scope and filters (owner filter included); combined with the cursor condition by `$and`. */
  filter: Filter<T>;
  page: PageRequest;
  /** Default `_id`. A `created_at` order needs every document to carry a Date `created_at`. */
  sortField?: SortField;
  /** 1 ascending (default), -1 descending (newest first for `created_at`). */
  direction?: 1 | -1;
  /** PUBLIC_URL from the configuration; without it the Link header uses the request's own origin. */
  baseUrl?: string | undefined;
  projection?: Document;
}

/** One page of documents; sets the `Link` header when there is a next page. */
export async function paginate<T extends { _id: string }>(ctx: Context, opts: PaginateOptions<T>): Promise<T[]> {
  const sortField = opts.sortField ?? '_id';
  const direction = opts.direction ?? 1;
  const after = opts.page.cursor === undefined ? undefined : decodeCursor(opts.page.cursor, sortField);
  const filter = after ? ({ $and: [opts.filter, afterFilter(sortField, direction, after)] } as Filter<T>) : opts.filter;
  const sort: Sort = sortField === '_id' ? { _id: direction } : { [sortField]: direction, _id: direction };
  // One extra document tells whether a next page exists without a count query.
  const docs = (await opts.collection
    .find(filter, { sort, limit: opts.page.limit + 1, ...(opts.projection ? { projection: opts.projection } : {}) })
    .toArray()) as T[];
  if (docs.length > opts.page.limit) {
    docs.length = opts.page.limit;
    const last = docs[docs.length - 1] as T;
    ctx.set('Link', `<${nextPageUrl(ctx, opts.baseUrl, encodeCursor(sortField, last))}>; rel="next"`);
  }
  return docs;
}

/** Cursor content: the sort key of the last item of the page. Opaque to clients (base64url JSON). */
interface CursorPosition {
  id: string;
  /** Epoch ms of `created_at` when sorting by it. */
  at?: number;
}

function encodeCursor(sortField: SortField, last: { _id: string }): string {
  const pos: CursorPosition = { id: last._id };
  if (sortField === 'created_at') {
    const at = (last as { created_at?: unknown }).created_at;
    pos.at = at instanceof Date ? at.getTime() : 0;
  }
  return Buffer.from(JSON.stringify(pos), 'utf8').toString('base64url');
}

const cursorSchema = z.strictObject({ id: z.string().min(1).max(128), at: z.number().int().optional() });

function decodeCursor(cursor: string, sortField: SortField): CursorPosition {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new BadRequestError('cursor: invalid (use the Link header of the previous page)', 'invalid_field');
  }
  const parsed = cursorSchema.safeParse(raw);
  if (!parsed.success || (sortField === 'created_at') !== (parsed.data.at !== undefined)) {
    throw new BadRequestError('cursor: invalid (use the Link header of the previous page)', 'invalid_field');
  }
  return parsed.data;
}

function afterFilter(sortField: SortField, direction: 1 | -1, pos: CursorPosition): Document {
  const cmp = direction === 1 ? '$gt' : '$lt';
  if (sortField === '_id') return { _id: { [cmp]: pos.id } };
  const at = new Date(pos.at ?? 0);
  return { $or: [{ created_at: { [cmp]: at } }, { created_at: at, _id: { [cmp]: pos.id } }] };
}

function nextPageUrl(ctx: Context, baseUrl: string | undefined, cursor: string): string {
  const base = (baseUrl ?? ctx.origin).replace(/\/+$/, '');
  const url = new URL(`${base}${ctx.path}`);
  for (const [key, value] of Object.entries(ctx.query)) {
    if (key === 'cursor' || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v);
  }
  url.searchParams.set('cursor', cursor);
  return url.toString();
}
