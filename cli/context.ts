/**
 * What every command needs: a way to reach the database (opened lazily, once, closed by the entrypoint) and where to
 * write. Commands receive it instead of reading globals, so the same code runs in the entrypoint and in tests.
 */
import type { Db } from 'mongodb';
import type { Config } from '../config';
import { connectDatabase, type Database } from '../db/client';
import { ensureIndexes } from '../db/indexes';
import { CliError } from './errors';

export interface CliOutput {
  /** The command's result (a key, an id, a table): what a script would capture. */
  out(line: string): void;
  /** Notes for the person at the terminal. */
  err(line: string): void;
}

export interface CliContext {
  io: CliOutput;
  db(): Promise<Db>;
  close(): Promise<void>;
}

export function createCliContext(config: Config, io: CliOutput): CliContext {
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
