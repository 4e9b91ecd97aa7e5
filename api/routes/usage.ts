/**
 * GET /api/v1/usage — the caller's counted model usage over a range of UTC days, grouped by day, model, template,
 * workflow and/or thread, priced with the operator's table (decision 0531). Reads only.
 */
import Router from '@koa/router';
import { userId } from '../http/caller';
import { respond } from '../http/envelope';
import { BadRequestError } from '../http/errors';
import { authenticated } from '../http/route-deps';
import { validate } from '../middleware/validate';
import { presentUsage } from '../presenters/usage';
import { usageQuery } from '../schemas/usage';
import { firstThreadDay, readUsage, usageNames } from '../../db/usage-report';
import { USAGE_DAY_KEEP_DAYS, utcDay } from '../../db/usage';
import type { ApiDeps } from '../deps';

const read = validate({ query: usageQuery });

/** Days in the default range (today and the 29 before it). */
const DEFAULT_DAYS = 30;

export function usageRoutes(deps: ApiDeps): Router {
  const router = new Router();

  router.get('/usage', ...authenticated(deps), read, async (ctx) => {
    const { query } = read.input(ctx);
    const today = utcDay(new Date());
    const to = query.to ?? today;
    const groupBy = query.group_by ?? ['day'];
    const threads = groupBy.includes('thread') ? firstThreadDay(today) : undefined;
    // The default range is the last 30 days, or the kept week when grouping by thread.
    const defaultFrom = shift(to, -(DEFAULT_DAYS - 1));
    const from = query.from ?? (threads !== undefined && threads > defaultFrom ? threads : defaultFrom);
    if (threads !== undefined && (from < threads || to < threads)) {
      throw new BadRequestError(
        `grouping by thread covers the days from ${threads} on (calls are kept a week)`,
        'invalid_range',
      );
    }
    if (from > to) throw new BadRequestError(`from (${from}) is after to (${to})`, 'invalid_range');
    if (shift(from, USAGE_DAY_KEEP_DAYS - 1) < to) {
      throw new BadRequestError(`a range covers at most ${USAGE_DAY_KEEP_DAYS} days`, 'invalid_range');
    }
    const range = { from, to, groupBy };
    const rows = await readUsage(deps.db, userId(ctx), range);
    const names = await usageNames(deps.db, userId(ctx), rows);
    respond(ctx, 200, presentUsage(rows, range, deps.config.MODEL_PRICES, names));
  });

  return router;
}

/** `day` moved by `days` (UTC). */
function shift(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return utcDay(d);
}
