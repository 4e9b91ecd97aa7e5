/** What middleware puts on ctx.state, typed once for every handler. */
import type { Logger } from 'pino';

/** The authenticated caller (set by the auth middleware on protected routes). */
export interface AuthUser {
  id: string;
  /** The API key the request was made with. */
  keyId: string;
  /** The presented key's hash (db/users.ts hashKey): what rate limits count by, never the key itself. */
  keyHash: string;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    /** The request's logger (with its id and whatever bindLog added), made on first use. */
    log: Logger;
    /** Adds fields to every line the request logs from now on, without making a logger for it. */
    bindLog(fields: Record<string, unknown>): void;
    user?: AuthUser;
  }
}
