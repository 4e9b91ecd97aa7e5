import { isLlmProviderName } from '../../shared/llm-providers';
import { LlmError } from './errors';
import type { ModelRef } from './types';

/** Parses `openai:<name>`, `anthropic:<name>` or `compat:<name>`; anything else is a non-retryable LlmError. */
export function parseModelRef(model: string): ModelRef {
  const at = model.indexOf(':');
  const provider = at > 0 ? model.slice(0, at) : '';
  const name = model.slice(at + 1).trim();
  if (!isLlmProviderName(provider) || name === '') {
    throw new LlmError(
      'invalid_model',
      `model "${model}" is not of the form openai:<name>, anthropic:<name> or compat:<name>`,
    );
  }
  return { provider, name };
}
