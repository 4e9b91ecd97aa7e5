/**
 * JSONL of dataset items, in (an import's text) and out (an export's lines are presenters/dataset.ts exportLine).
 * Every line is read and checked before anything is written: the first bad one is reported by its line number
 * (1-based, blank lines counted) and the import writes nothing.
 */
import { ApiError, BadRequestError } from '../http/errors';
import { findOperatorKey } from '../middleware/body';
import { describeIssue } from '../middleware/validate';
import { datasetItemInput, MAX_ITEMS_PER_CHANGE } from '../schemas/datasets';
import type { LabelledItem } from './dataset-items';

/** The items of a JSONL text; 400 naming the first bad line. */
export function parseItemsJsonl(text: string): LabelledItem[] {
  const items: LabelledItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const label = `line ${i + 1}`;
    if (items.length === MAX_ITEMS_PER_CHANGE) {
      throw new BadRequestError(`${label}: more than ${MAX_ITEMS_PER_CHANGE} items in one import`, 'too_many_items');
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new BadRequestError(`${label}: not JSON (${(err as Error).message})`, 'invalid_jsonl');
    }
    try {
      // The body's own rules, which a JSON body gets from the middleware: nesting depth and key rules.
      findOperatorKey(value, label);
    } catch (err) {
      if (err instanceof ApiError) throw new BadRequestError(err.message, 'invalid_jsonl');
      throw err;
    }
    const parsed = datasetItemInput.safeParse(value, { reportInput: true });
    if (!parsed.success) {
      const problems = parsed.error.issues.flatMap((issue) => describeIssue(issue));
      throw new BadRequestError(`${label}: ${problems.slice(0, 5).join('; ')}`, 'invalid_jsonl');
    }
    items.push({ label, item: parsed.data });
  }
  if (items.length === 0) throw new BadRequestError('jsonl: no items (every line is blank)', 'invalid_jsonl');
  return items;
}
