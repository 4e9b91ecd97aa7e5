/** The only MongoClient. Entrypoints connect once and pass the Db down; nothing else constructs a client. */
import { MongoClient, type Db } from 'mongodb';

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

/** Fail fast when the server is gone: requests answer 503 instead of hanging (PRODUCT.md). */
const SERVER_SELECTION_TIMEOUT_MS = 2_000;

export interface DatabaseOptions {
  uri: string;
  dbName: string;
  /** Connect now (default) or on first use — servers start while MongoDB may still be coming up. */
  connect?: boolean;
  /**
   * Called once per command the driver sends (command monitoring), with the command's name and its collection (`-`
   * for commands on no collection): what round trips a request or step costs. Unset: no monitoring.
   */
  onCommand?: (command: string, collection: string) => void;
}

export async function connectDatabase(opts: DatabaseOptions): Promise<Database> {
  // No serverApi option: the embedded wire server used in dev and tests does not implement `hello` with apiVersion.
  const client = new MongoClient(opts.uri, {
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    connectTimeoutMS: 2_000,
    appName: 'stepwise',
    monitorCommands: opts.onCommand !== undefined,
  });
  const onCommand = opts.onCommand;
  if (onCommand) client.on('commandStarted', (e) => onCommand(e.commandName, commandCollection(e.command)));
  if (opts.connect !== false) await client.connect();
  const db = client.db(opts.dbName);
  return { client, db, close: () => client.close() };
}

/**
 * The collection a command names: the value of its first field for collection commands (`{find: 'runs'}`), the
 * `collection` field of a getMore; `-` for the others (ping, endSessions, transactions).
 */
function commandCollection(command: Record<string, unknown>): string {
  const first = Object.values(command)[0];
  if (typeof first === 'string') return first;
  return typeof command.collection === 'string' ? command.collection : '-';
}

/** Cheap liveness probe used by /readyz. */
export async function pingDatabase(db: Db): Promise<boolean> {
  try {
    await db.command({ ping: 1 }, { timeoutMS: 1_500 });
    return true;
  } catch {
    return false;
  }
}
