/** `transform`: the JSONata expression evaluated out of process (temporal/expressions). */
import { transformDeclaration } from '../../domain/actions/transform';
import type { ActionDefinition } from './types';

export const transformAction = {
  ...transformDeclaration,
  async execute(cfg, ctx) {
    return ctx.expressions.evaluate(cfg.expression, cfg.data ?? null);
  },
} satisfies ActionDefinition<'transform', typeof transformDeclaration.config, typeof transformDeclaration.output>;
