/**
 * What every command needs: a way to reach the database (opened lazily, once, closed by the entrypoint), the API
 * client of the user commands, and where to write. Commands receive it instead of reading globals, so the same code
 * runs in the entrypoint and in tests.
 */
import type { Db } from 'mongodb';
import { processEnvironment, type Config } from '../config';
import { connectDatabase, type Database } from '../db/client';
import { ensureIndexes } from '../db/indexes';
import { ApiClient } from './api-client';
import { CliError } from './errors';

export interface CliOutput {
  /** The command's result (a key, an id, a table): what a script would capture. */
  out(line: string): void;
  /** Notes for the person at the terminal. */
  err(line: string): void;
  /** Raw writes to stdout, no newline added (an agent's text as it comes); without it, text goes out by lines. */
  write?(text: string): void;
  /** Present when stdout is a terminal: raw writes (ANSI redraws) and its size; `stream` for line editing (`chat`). */
  terminal?: { write(text: string): void; columns: number; rows: number; stream?: NodeJS.WritableStream };
  /** stdin, for `chat` (the messages it sends); absent, `chat` has nothing to read. */
  input?: { stream: NodeJS.ReadableStream; isTTY: boolean };
}

/** --url / --api-key of a user command; unset ones come from STEPWISE_URL / STEPWISE_API_KEY. */
export interface ApiFlags {
  url?: string;
  apiKey?: string;
}

export interface CliContext {
  io: CliOutput;
  db(): Promise<Db>;
  /** The HTTP API client the user commands act through, with the flags or the configured URL and key. */
  api(flags: ApiFlags): ApiClient;
  /** A variable of the environment the CLI runs in (the secrets a definition file names: `auth.token_env`). */
  env(name: string): string | undefined;
  /** The process exit code when the command returns normally (`runs watch`: 1 when the run did not complete). */
  exitCode: number;
  close(): Promise<void>;
}

/** Where the user commands find the API: the flag, else STEPWISE_URL, else the local API on API_PORT. */
export function apiClientFor(config: Config, flags: ApiFlags): ApiClient {
  const baseUrl = flags.url ?? config.STEPWISE_URL ?? `http://127.0.0.1:${config.API_PORT}`;
  try {
    if (!/^https?:$/.test(new URL(baseUrl).protocol)) throw new Error('not http(s)');
  } catch {
    throw new CliError(`--url / STEPWISE_URL: "${baseUrl}" is not an http(s) URL`);
  }
  const apiKey = flags.apiKey ?? config.STEPWISE_API_KEY;
  if (!apiKey) {
    throw new CliError(
      'no API key: pass --api-key <key> or set STEPWISE_API_KEY. On the dev stack, paste the `export` lines ' +
        '`npm run dev` prints (its demo key is also kept in .stepwise/demo-key: ' +
        'export STEPWISE_API_KEY=$(cat .stepwise/demo-key)); elsewhere an administrator makes a key with: ' +
        'npm run cli -- keys create <user>',
    );
  }
  return new ApiClient({ baseUrl, apiKey });
}

export function createCliContext(
  config: Config,
  io: CliOutput,
  environment: Readonly<Record<string, string | undefined>> = processEnvironment(),
): CliContext {
  let database: Promise<Database> | undefined;
  const open = async (): Promise<Database> => {
    try {
      const opened = await connectDatabase({ uri: config.MONGODB_URI, dbName: config.MONGODB_DB });
      // The unique index on user names is what turns a duplicate `users create` into a clear error.
      await ensureIndexes(opened.db);
      return opened;
    } catch (err) {
      throw new CliError(
        `cannot reach MongoDB (MONGODB_URI, database ${config.MONGODB_DB}): ${(err as Error).message}; is \`npm run dev\` running?`,
      );
    }
  };
  return {
    io,
    api: (flags) => apiClientFor(config, flags),
    env: (name) => (environment[name] === '' ? undefined : environment[name]),
    exitCode: 0,
    async db() {
      database ??= open();
      return (await database).db;
    },
    async close() {
      if (!database) return;
      await database.then((d) => d.close()).catch(() => undefined);
    },
  };
}
