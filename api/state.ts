/** What middleware puts on ctx.state, typed once for every handler. */
import type { Logger } from 'pino';

/** The authenticated caller (set by the auth middleware on protected routes). */
export interface AuthUser {
  id: string;
  /** The API key the request was made with. */
  keyId: string;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    user?: AuthUser;
  }
}
