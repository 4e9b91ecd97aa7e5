/**
 * MCP servers a user registered (`mcp_servers`): where agents' MCP tools come from. The credentials (a bearer token or
 * custom headers) are sealed with the payload codec's keys before they are stored (shared/codec/sealed-json.ts) and
 * opened only by the worker's MCP activities; `auth_type` says in clear which kind is set, for reads. Names are unique
 * per owner (index `owner_name_unique`): tool names shown to a model are namespaced by them.
 */
import type { Db } from 'mongodb';
import type { SealedJson } from '../domain/codec-keys';
import { newId } from './ids';
import { isDuplicateKey } from './duplicate-key';

export type McpAuthType = 'none' | 'bearer' | 'headers';

/** What the sealed credentials hold once opened. */
export interface McpCredentials {
  bearer_token?: string;
  headers?: Record<string, string>;
  /**
   * The origin (`scheme://host:port`) of the URL the credentials were given for, sealed with them: the worker sends
   * them only to that origin (a run started before the server moved keeps its old URL, never with the new secret).
   * Absent in credentials sealed before it was kept: those are sent nowhere until `auth` is written again.
   */
  origin?: string;
}

/** The origin credentials given for `url` are bound to. */
export function credentialsOrigin(url: string): string {
  return new URL(url).origin;
}

export interface McpServerDoc {
  /** `mcp_…`. */
  _id: string;
  owner_id: string;
  name: string;
  /** Streamable HTTP endpoint (http or https), without credentials in it. */
  url: string;
  auth_type: McpAuthType;
  /** Null exactly when auth_type is `none`. */
  credentials: SealedJson | null;
  /** Null: every tool the server lists may be used; else only these names. */
  allowed_tools: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export function mcpServersCollection(db: Db) {
  return db.collection<McpServerDoc>('mcp_servers');
}

export function newMcpServerId(): string {
  return newId('mcp');
}

/** False when the owner already has a server of that name (the unique index decides, also between two writes). */
export async function insertMcpServer(db: Db, doc: McpServerDoc): Promise<boolean> {
  try {
    await mcpServersCollection(db).insertOne(doc);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

export async function findOwnMcpServer(db: Db, ownerId: string, id: string): Promise<McpServerDoc | null> {
  return mcpServersCollection(db).findOne({ _id: id, owner_id: ownerId });
}

/** The owner's servers among `ids` (the others are unknown or someone else's). */
export async function findOwnMcpServers(db: Db, ownerId: string, ids: readonly string[]): Promise<McpServerDoc[]> {
  if (ids.length === 0) return [];
  return mcpServersCollection(db)
    .find({ _id: { $in: [...new Set(ids)] }, owner_id: ownerId })
    .toArray();
}

export async function countOwnMcpServers(db: Db, ownerId: string): Promise<number> {
  return mcpServersCollection(db).countDocuments({ owner_id: ownerId });
}

export async function updateOwnMcpServer(
  db: Db,
  ownerId: string,
  id: string,
  set: Partial<Pick<McpServerDoc, 'name' | 'url' | 'auth_type' | 'credentials' | 'allowed_tools'>>,
): Promise<McpServerDoc | null | 'duplicate_name'> {
  try {
    return await mcpServersCollection(db).findOneAndUpdate(
      { _id: id, owner_id: ownerId },
      { $set: { ...set, updated_at: new Date() } },
      { returnDocument: 'after' },
    );
  } catch (err) {
    if (isDuplicateKey(err)) return 'duplicate_name';
    throw err;
  }
}

export async function deleteOwnMcpServer(db: Db, ownerId: string, id: string): Promise<boolean> {
  const res = await mcpServersCollection(db).deleteOne({ _id: id, owner_id: ownerId });
  return res.deletedCount === 1;
}
