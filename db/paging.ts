/**
 * Keyset paging over any collection: a stable order `(sortField, _id)` and a cursor holding the sort key of the last
 * item returned. Inserts and deletes between two pages never repeat or skip an item present throughout. A cursor is
 * a position, not a secret: any text of CURSOR_PATTERN names one (the owner filter still applies), so the API's
 * document can state the whole rule as a pattern (docs/decisions/0040-document-states-validation.md).
 * The HTTP side (`?limit=`, `?cursor=`, the Link header) is api/http/pagination.ts.
 */
import type { Collection, Document, Filter, Sort } from 'mongodb';

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, or null on the last page. */
  nextCursor: string | null;
}

/** Which field orders the list (ties broken by `_id`, always in the same direction). */
export type SortField = '_id' | 'created_at';

export interface PageOrder {
  /** Default `_id`. A `created_at` order needs every document to carry a Date `created_at`. */
  sortField?: SortField;
  /** 1 ascending (default), -1 descending (newest first for `created_at`). */
  direction?: 1 | -1;
}

/** A cursor that does not match CURSOR_PATTERN. */
export class InvalidCursorError extends Error {
  constructor() {
    super('invalid cursor');
    this.name = 'InvalidCursorError';
  }
}

export async function findPage<T extends { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  page: PageRequest,
  order: PageOrder = {},
  /** Fields to leave out or keep (a MongoDB projection); the sort fields must stay. */
  projection?: Document,
): Promise<Page<T>> {
  const sortField = order.sortField ?? '_id';
  const direction = order.direction ?? 1;
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const query = after ? ({ $and: [filter, afterFilter(sortField, direction, after)] } as Filter<T>) : filter;
  const sort: Sort = sortField === '_id' ? { _id: direction } : { [sortField]: direction, _id: direction };
  // One extra document tells whether a next page exists without a count query.
  const items = (await collection
    .find(query, { sort, limit: page.limit + 1, ...(projection ? { projection } : {}) })
    .toArray()) as T[];
  if (items.length <= page.limit) return { items, nextCursor: null };
  items.length = page.limit;
  return { items, nextCursor: encodeCursor(sortField, items[items.length - 1] as T) };
}

/**
 * `<at>.<id>`: the last item's `created_at` in epoch milliseconds (0 in an `_id` order, where it is not read) and its
 * `_id` in base64url. Every text of this form decodes to a position (base64url of ≥ 2 characters is ≥ 1 byte).
 */
export const CURSOR_PATTERN = /^(?:0|[1-9][0-9]{0,14})\.[A-Za-z0-9_-]{2,172}$/;

interface CursorPosition {
  id: string;
  at: number;
}

function encodeCursor(sortField: SortField, last: { _id: string }): string {
  const at = sortField === 'created_at' ? (last as { created_at?: unknown }).created_at : undefined;
  const ms = at instanceof Date ? at.getTime() : 0;
  return `${ms}.${Buffer.from(last._id, 'utf8').toString('base64url')}`;
}

function decodeCursor(cursor: string): CursorPosition {
  if (!CURSOR_PATTERN.test(cursor)) throw new InvalidCursorError();
  const dot = cursor.indexOf('.');
  return { at: Number(cursor.slice(0, dot)), id: Buffer.from(cursor.slice(dot + 1), 'base64url').toString('utf8') };
}

function afterFilter(sortField: SortField, direction: 1 | -1, pos: CursorPosition): Document {
  const cmp = direction === 1 ? '$gt' : '$lt';
  if (sortField === '_id') return { _id: { [cmp]: pos.id } };
  const at = new Date(pos.at);
  return { $or: [{ created_at: { [cmp]: at } }, { created_at: at, _id: { [cmp]: pos.id } }] };
}
