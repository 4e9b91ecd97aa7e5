/** The only MongoClient. Entrypoints connect once and pass the Db down; nothing else constructs a client. */
import { MongoClient, type Db } from 'mongodb';

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  uri: string;
  dbName: string;
  /** Fail fast when the server is gone: requests answer 503 instead of hanging (PRODUCT.md). */
  serverSelectionTimeoutMS?: number;
  /** Connect now (default) or on first use — servers start while MongoDB may still be coming up. */
  connect?: boolean;
}

export async function connectDatabase(opts: DatabaseOptions): Promise<Database> {
  // No serverApi option: the embedded wire server used in dev and tests does not implement `hello` with apiVersion.
  const client = new MongoClient(opts.uri, {
    serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 2_000,
    connectTimeoutMS: 2_000,
    appName: 'stepwise',
  });
  if (opts.connect !== false) await client.connect();
  const db = client.db(opts.dbName);
  return { client, db, close: () => client.close() };
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
