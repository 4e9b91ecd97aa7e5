/**
 * Tool results. Anything a tool refuses (unknown workflow, bad input, another user's run, a conflict, a limit) is an
 * MCP tool error (`isError: true`) with the API's own message, so the model can read and correct it; an unexpected
 * failure is logged and answered with a message that leaks nothing. Nothing a tool throws reaches the transport.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { ApiError } from '../http/errors';

/** A JSON value as the tool's text and as its structured content. */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

export function toolError(message: string, details?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    ...(details ? { structuredContent: { error: message, ...details } } : {}),
  };
}

/** The tool error for `err`: an ApiError's message (5xx ones are written not to leak), anything else a generic one. */
export function errorResult(err: unknown, log: Logger): CallToolResult {
  if (err instanceof ApiError) {
    if (err.status >= 500) log.warn({ err }, 'mcp tool call failed');
    const retryAfter = err.headers['Retry-After'];
    return toolError(err.message, {
      code: err.code,
      ...(retryAfter ? { retry_after_seconds: Number(retryAfter) } : {}),
    });
  }
  log.error({ err }, 'mcp tool call failed');
  return toolError('internal error: the tool call failed; try again later', { code: 'internal' });
}
