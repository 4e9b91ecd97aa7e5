export * from './types';
export { LlmError, classifyLlmError, retryAfterMs, type LlmErrorKind } from './errors';
export { parseModelRef } from './model-ref';
export { createLlmProvider, type LlmConfig, type ProviderOptions } from './provider';
export {
  buildSystemPrompt,
  buildUserMessage,
  buildRepairMessage,
  MAX_USER_MESSAGE_BYTES,
  type PromptParts,
} from './prompt';
