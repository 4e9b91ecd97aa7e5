/** Who an MCP handler acts for: the authenticated caller of one request (its dependencies are the app's ApiDeps). */
import type { Logger } from 'pino';

/** The caller of one /mcp request (stateless: built from the request's own API key each time). */
export interface McpCaller {
  ownerId: string;
  /** The API key's id: part of a derived idempotency key, so two keys of one user never share a run. */
  keyId: string;
  /** Absolute base of status and approve URLs (PUBLIC_URL or the request origin). */
  baseUrl: string;
  /** Takes one run start from the key's budget (429 → a tool error). */
  chargeRunStart: () => Promise<void>;
  log: Logger;
}
