/**
 * Keyset paging over any collection: a stable order `(sortField, _id)` and an opaque cursor holding the sort key of
 * the last item returned. Inserts and deletes between two pages never repeat or skip an item present throughout.
 * The HTTP side (`?limit=`, `?cursor=`, the Link header) is api/pagination.ts.
 */
import type { Collection, Document, Filter, Sort } from 'mongodb';
import { z } from 'zod';

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

/** A cursor that was not produced by this order (tampered, or from another list). */
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
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, sortField);
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

/** Cursor content: the sort key of the last item of the page, as base64url JSON. */
const cursorSchema = z.strictObject({ id: z.string().min(1).max(128), at: z.number().int().optional() });
type CursorPosition = z.infer<typeof cursorSchema>;

function encodeCursor(sortField: SortField, last: { _id: string }): string {
  const pos: CursorPosition = { id: last._id };
  if (sortField === 'created_at') {
    const at = (last as { created_at?: unknown }).created_at;
    pos.at = at instanceof Date ? at.getTime() : 0;
  }
  return Buffer.from(JSON.stringify(pos), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, sortField: SortField): CursorPosition {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const parsed = cursorSchema.safeParse(raw);
  if (!parsed.success || (sortField === 'created_at') !== (parsed.data.at !== undefined)) {
    throw new InvalidCursorError();
  }
  return parsed.data;
}

function afterFilter(sortField: SortField, direction: 1 | -1, pos: CursorPosition): Document {
  const cmp = direction === 1 ? '$gt' : '$lt';
  if (sortField === '_id') return { _id: { [cmp]: pos.id } };
  const at = new Date(pos.at ?? 0);
  return { $or: [{ created_at: { [cmp]: at } }, { created_at: at, _id: { [cmp]: pos.id } }] };
}
