/** `delay`: a durable timer carried out by the workflow, so nothing to execute. */
import { delayDeclaration } from '../../domain/actions/delay';
import type { ActionDefinition } from './types';

export { MAX_DELAY_SECONDS } from '../../domain/builtin-actions';

export const delayAction = delayDeclaration satisfies ActionDefinition<'delay'>;
