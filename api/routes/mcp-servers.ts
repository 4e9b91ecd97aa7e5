/**
 * MCP servers, a resource of the user: register, list, read, change, delete. Credentials are sealed with the payload
 * codec's keys on write and never come back out of this API (docs/mcp.md, decision 0400).
 */
import { userId } from '../http/caller';
import Router from '@koa/router';
import type { Context } from 'koa';
import {
  countOwnMcpServers,
  credentialsOrigin,
  deleteOwnMcpServer,
  findOwnMcpServer,
  insertMcpServer,
  mcpServersCollection,
  newMcpServerId,
  updateOwnMcpServer,
  type McpAuthType,
  type McpCredentials,
  type McpServerDoc,
} from '../../db/mcp-servers';
import { isId } from '../../db/ids';
import { findMcpServerUses } from '../../db/mcp-server-uses';
import { NoSealingKeyError, sealJson, type SealedJson } from '../../shared/codec/sealed-json';
import { respond } from '../http/envelope';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { pageQuery, paginate } from '../http/pagination';
import { presentMcpServer } from '../presenters/mcp-server';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import {
  createMcpServerBody,
  mcpServerIdParams,
  updateMcpServerBody,
  type McpServerAuthInput,
} from '../schemas/mcp-servers';

export const listMcpServers = validate({ query: pageQuery });
export const createMcpServer = validate({ body: createMcpServerBody });
export const getMcpServer = validate({ params: mcpServerIdParams });
export const patchMcpServer = validate({ params: mcpServerIdParams, body: updateMcpServerBody });
export const removeMcpServer = validate({ params: mcpServerIdParams });

function nameTaken(name: string): ConflictError {
  return new ConflictError(`name: you already have an MCP server named "${name}"`, 'duplicate_name');
}

/** The stored form of `auth`: its kind in clear, the secrets sealed with the origin of `url` they are given for. */
async function sealAuth(
  deps: ApiDeps,
  auth: McpServerAuthInput | null | undefined,
  url: string,
): Promise<{ auth_type: McpAuthType; credentials: SealedJson | null }> {
  if (!auth) return { auth_type: 'none', credentials: null };
  const origin = credentialsOrigin(url);
  const plain: McpCredentials =
    auth.type === 'bearer' ? { bearer_token: auth.token, origin } : { headers: auth.headers, origin };
  try {
    return { auth_type: auth.type, credentials: await sealJson(deps.config.PAYLOAD_CODEC_KEYS, plain) };
  } catch (err) {
    if (err instanceof NoSealingKeyError) {
      throw new BadRequestError(
        'auth: this service cannot store credentials (PAYLOAD_CODEC_KEYS is not set); register the server without auth',
        'credentials_unavailable',
      );
    }
    throw err;
  }
}

/**
 * Credentials never follow a server to another origin (decision 0403): a PATCH that moves the URL to another
 * scheme, host or port must say what the new origin gets — `auth` again, or `auth: null` to drop it. Otherwise anyone
 * holding the API key could re-point the URL at a host of theirs and receive the token with the next run.
 */
function assertCredentialsFollow(current: McpServerDoc, body: { url?: string; auth?: unknown }): void {
  if (body.url === undefined || body.auth !== undefined || current.auth_type === 'none') return;
  const from = credentialsOrigin(current.url);
  const to = credentialsOrigin(body.url);
  if (from === to) return;
  throw new BadRequestError(
    `auth: required when the url's origin changes (the credentials were given for ${from}, not ${to}); ` +
      'send auth again, or auth: null to drop it',
    'auth_required',
  );
}

/**
 * 409 naming the templates and workflows whose `mcp_tools` still name the server: deleted, it would make each of their
 * runs fail at the start. (A definition written between this check and the delete is caught at its run's start.)
 */
async function assertUnused(deps: ApiDeps, ownerId: string, server: McpServerDoc): Promise<void> {
  const uses = await findMcpServerUses(deps.db, ownerId, server._id);
  const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ');
  const users = [
    uses.templates.length > 0 ? `templates ${quoted(uses.templates)}` : '',
    uses.workflows.length > 0 ? `workflows ${quoted(uses.workflows)}` : '',
  ].filter((s) => s !== '');
  if (users.length === 0) return;
  throw new ConflictError(
    `MCP server "${server.name}" is used by the mcp_tools of ${users.join(' and ')}; ` +
      'remove it from them first, then delete it',
    'mcp_server_in_use',
  );
}

export function mcpServerRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);

  const ownServer = async (ctx: Context, id: string): Promise<McpServerDoc> => {
    const doc = isId('mcp', id) ? await findOwnMcpServer(deps.db, userId(ctx), id) : null;
    if (!doc) throw new NotFoundError(`MCP server ${id} not found`);
    return doc;
  };

  router.get('/mcp-servers', ...auth, listMcpServers, async (ctx) => {
    const { query } = listMcpServers.input(ctx);
    const docs = await paginate(ctx, {
      collection: mcpServersCollection(deps.db),
      filter: { owner_id: userId(ctx) },
      page: query,
      order: { sortField: 'created_at', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentMcpServer));
  });

  router.post('/mcp-servers', ...auth, createMcpServer, async (ctx) => {
    const { body } = createMcpServer.input(ctx);
    const count = await countOwnMcpServers(deps.db, userId(ctx));
    if (count >= deps.config.MCP_SERVERS_MAX_PER_USER) {
      throw new ConflictError(`you already have ${count} MCP servers (MCP_SERVERS_MAX_PER_USER); delete one first`);
    }
    const now = new Date();
    const doc: McpServerDoc = {
      _id: newMcpServerId(),
      owner_id: userId(ctx),
      name: body.name,
      url: body.url,
      ...(await sealAuth(deps, body.auth, body.url)),
      allowed_tools: body.allowed_tools ?? null,
      created_at: now,
      updated_at: now,
    };
    if (!(await insertMcpServer(deps.db, doc))) throw nameTaken(body.name);
    ctx.set('Location', `/api/v1/mcp-servers/${doc._id}`);
    respond(ctx, 201, presentMcpServer(doc));
  });

  router.get('/mcp-servers/:id', ...auth, getMcpServer, async (ctx) => {
    const { params } = getMcpServer.input(ctx);
    respond(ctx, 200, presentMcpServer(await ownServer(ctx, params.id)));
  });

  router.patch('/mcp-servers/:id', ...auth, patchMcpServer, async (ctx) => {
    const { params, body } = patchMcpServer.input(ctx);
    const current = await ownServer(ctx, params.id);
    assertCredentialsFollow(current, body);
    const url = body.url ?? current.url;
    const updated = await updateOwnMcpServer(deps.db, userId(ctx), params.id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.auth !== undefined ? await sealAuth(deps, body.auth, url) : {}),
      ...(body.allowed_tools !== undefined ? { allowed_tools: body.allowed_tools } : {}),
    });
    if (updated === 'duplicate_name') throw nameTaken(body.name ?? '');
    if (!updated) throw new NotFoundError(`MCP server ${params.id} not found`);
    respond(ctx, 200, presentMcpServer(updated));
  });

  router.delete('/mcp-servers/:id', ...auth, removeMcpServer, async (ctx) => {
    const { params } = removeMcpServer.input(ctx);
    const server = await ownServer(ctx, params.id);
    await assertUnused(deps, userId(ctx), server);
    await deleteOwnMcpServer(deps.db, userId(ctx), params.id);
    respond(ctx, 200, { id: params.id, deleted: true });
  });

  return router;
}
