/** How a step's prompt, tasks, input and output schema become the system prompt and the first user message. */
import type { JsonObject, JsonValue } from '../contract/json';

export interface PromptParts {
  prompt: string;
  tasks: string[];
  output_schema?: JsonObject;
}

/** The template's prompt, then the tasks as an explicit numbered checklist, then the answer format if one is required. */
export function buildSystemPrompt(parts: PromptParts): string {
  const sections = [parts.prompt.trim()];
  if (parts.tasks.length > 0) {
    sections.push(
      [
        'Complete every task of this checklist, in order, before giving your final answer:',
        ...parts.tasks.map((t, i) => `${i + 1}. ${t}`),
      ].join('\n'),
    );
  }
  if (parts.output_schema) {
    sections.push(
      `Your final answer must be a single JSON value (no prose, no code fences) that validates against this JSON Schema:\n${JSON.stringify(parts.output_schema)}`,
    );
  }
  return sections.join('\n\n');
}

/** Largest user message (the rendered step input) an agent step sends: about 64k tokens. */
export const MAX_USER_MESSAGE_BYTES = 256 * 1024;

/** The rendered step input as the user message: strings as they are, anything else as JSON. */
export function buildUserMessage(input: JsonValue): string {
  return typeof input === 'string' ? input : JSON.stringify(input, null, 2);
}

/** The repair turn's message when a final answer did not fit `output_schema`. */
export function buildRepairMessage(problem: string): string {
  return `Your previous answer was rejected: ${problem}. Answer again with only a JSON value that validates against the required JSON Schema.`;
}
