/** Converts the transcript's provider-neutral messages into the AI SDK's ModelMessage list. */
import type { ModelMessage } from 'ai';
import type { JsonValue } from '../../domain/json';
import type { LlmMessage } from './types';

type ToolResultOutput = { type: 'json'; value: JsonValue } | { type: 'error-json'; value: JsonValue };

export function toModelMessages(messages: LlmMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.text });
        break;
      case 'assistant': {
        const content: Extract<ModelMessage, { role: 'assistant' }>['content'] = [];
        if (message.text) content.push({ type: 'text', text: message.text });
        for (const call of message.tool_calls) {
          content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args });
        }
        out.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        // Every result of one assistant turn goes back in one message (Anthropic requires them together).
        const previous = out[out.length - 1];
        const parts = message.results.map((r) => ({
          type: 'tool-result' as const,
          toolCallId: r.call_id,
          toolName: r.name,
          output: (r.is_error
            ? { type: 'error-json', value: r.output }
            : { type: 'json', value: r.output }) satisfies ToolResultOutput,
        }));
        if (previous?.role === 'tool') previous.content.push(...parts);
        else out.push({ role: 'tool', content: parts });
        break;
      }
    }
  }
  return out;
}
