/**
 * `GET /agents` from copies of the pages it has answered, each filed under the template versions it was made at
 * (db/template-versions.ts): a list is one read of two small counters instead of the query, the documents and their
 * presentation, and a copy is used only while both counters still read the same, so a template written through any
 * API process shows in the next list from every process.
 *
 * A copy is also dropped after COPY_TTL_MS: the bound on a list that missed a write whose bump never happened (the
 * process died between the two, or the bump failed), or a template edited in the database by hand.
 */
import type { Db } from 'mongodb';
import { listVisibleTemplates, type TemplateListFilters } from '../../db/templates';
import { templateVersionsOf } from '../../db/template-versions';
import type { Page } from '../../db/paging';
import { presentTemplate, type TemplateView } from '../presenters/template';

export const COPY_TTL_MS = 30_000;
/** Copies kept (least recently used dropped first): a page is a few kB to a few tens of kB. */
const MAX_COPIES = 200;

export interface TemplateListQuery extends TemplateListFilters {
  limit: number;
  cursor?: string | undefined;
}

interface Copy {
  versions: string;
  madeAt: number;
  page: Page<TemplateView>;
}

export class TemplateLists {
  private readonly copies = new Map<string, Copy>();

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** One page of what `ownerId` sees, presented. An invalid cursor throws as listVisibleTemplates does. */
  async list(ownerId: string, query: TemplateListQuery): Promise<Page<TemplateView>> {
    // Read before the list: a list made later is never older than these counters (see db/template-versions.ts).
    const versions = await templateVersionsOf(this.db, ownerId);
    const key = JSON.stringify([
      ownerId,
      query.tag ?? null,
      query.step_type ?? null,
      query.limit,
      query.cursor ?? null,
    ]);
    const copy = this.copies.get(key);
    this.copies.delete(key);
    if (copy && copy.versions === versions && this.now() - copy.madeAt < COPY_TTL_MS) {
      this.copies.set(key, copy);
      return copy.page;
    }
    const found = await listVisibleTemplates(
      this.db,
      ownerId,
      { tag: query.tag, step_type: query.step_type },
      { limit: query.limit, cursor: query.cursor },
    );
    const page = { items: found.items.map(presentTemplate), nextCursor: found.nextCursor };
    this.copies.set(key, { versions, madeAt: this.now(), page });
    if (this.copies.size > MAX_COPIES) this.copies.delete(this.copies.keys().next().value as string);
    return page;
  }
}
