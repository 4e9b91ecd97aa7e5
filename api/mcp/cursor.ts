/** Opaque cursors of MCP list results (tools/list, list_workflows, list_approvals): a position, never an offset. */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

export function encodeCursor(position: Record<string, string>): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/** The position in `cursor`, or an invalid-params error (the protocol's answer to a cursor it did not issue). */
export function decodeCursor<T extends z.ZodType>(cursor: string, shape: T): z.infer<T> {
  try {
    return shape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new McpError(ErrorCode.InvalidParams, 'invalid cursor');
  }
}
