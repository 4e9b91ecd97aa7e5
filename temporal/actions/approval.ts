/** `approval`: carried out by the workflow (a human decision through the API), so nothing to execute. */
import { approvalDeclaration } from '../../domain/actions/approval';
import type { ActionDefinition } from './types';

export const approvalAction = approvalDeclaration satisfies ActionDefinition<'approval'>;
