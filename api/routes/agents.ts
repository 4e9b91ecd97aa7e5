/**
 * /api/v1/agents: agent templates (system + the caller's own), the tool registry and the action types.
 * `tools` and `actions` are fixed words registered before `/:id`, so they are never taken as an id.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { userId } from '../http/caller';
import { isId, newId } from '../../db/ids';
import {
  createTemplate,
  deleteOwnTemplate,
  findVisibleTemplate,
  templateContent,
  updateOwnTemplate,
  type TemplateContent,
  type TemplateDoc,
} from '../../db/templates';
import { ACTION_CATALOG, actionConfigJsonSchema } from '../../domain/actions/catalog';
import { TOOL_DECLARATIONS, toolParametersSchema } from '../../domain/tools/catalog';
import { templateWarnings, withWarnings } from '../commands/model-warnings';
import { respond } from '../http/envelope';
import { BadRequestError, ForbiddenError, NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { dryRunQuery, isDryRun, withoutId } from '../schemas/dry-run';
import { pageOrBadRequest, setNextLink } from '../http/pagination';
import { presentTemplate } from '../presenters/template';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import { createTemplateBody, listTemplatesQuery, templateIdParams, updateTemplateBody } from '../schemas/agents';
import { templateRuleProblems } from '../schemas/agent-rules';
import { mcpToolProblems } from '../commands/check-mcp-tools';
import { assertTemplateNameFree, writeWithTemplateName } from '../commands/template-names';
import type { ActionType } from '../../domain/action-types';

const list = validate({ query: listTemplatesQuery });
const byId = validate({ params: templateIdParams });
const create = validate({ query: dryRunQuery, body: createTemplateBody });
const update = validate({ params: templateIdParams, query: dryRunQuery, body: updateTemplateBody });

export function agentRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/agents' });
  const auth = authenticated(deps);
  // Both lists are fixed at build time; computed once per app.
  const tools = TOOL_DECLARATIONS.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: toolParametersSchema(t),
  }));
  const actions = (Object.keys(ACTION_CATALOG) as ActionType[]).map((name) => ({
    name,
    description: ACTION_CATALOG[name].description,
    config_schema: actionConfigJsonSchema(ACTION_CATALOG[name]),
  }));

  router.get('/tools', (ctx) => respond(ctx, 200, tools));
  router.get('/actions', (ctx) => respond(ctx, 200, actions));

  router.get('/', ...auth, list, async (ctx) => {
    const { query } = list.input(ctx);
    const page = await pageOrBadRequest(() => deps.templateLists.list(userId(ctx), query));
    setNextLink(ctx, page.nextCursor, deps.config.PUBLIC_URL);
    respond(ctx, 200, page.items);
  });

  router.post('/', ...auth, create, async (ctx) => {
    const { body, query } = create.input(ctx);
    const content: TemplateContent = body;
    assertRules(content);
    await assertOwnMcpServers(deps, userId(ctx), content.mcp_tools);
    const warnings = templateWarnings(deps.config, content);
    if (isDryRun(query)) {
      await assertTemplateNameFree(deps.db, userId(ctx), content.name);
      return respond(
        ctx,
        200,
        withWarnings(withoutId(presentTemplate(dryRunTemplate(userId(ctx), content))), warnings),
      );
    }
    const doc = await writeWithTemplateName(deps.db, userId(ctx), content.name, undefined, () =>
      createTemplate(deps.db, userId(ctx), content),
    );
    ctx.set('Location', `/api/v1/agents/${doc._id}`);
    respond(ctx, 201, withWarnings(presentTemplate(doc), warnings));
  });

  router.get('/:id', ...auth, byId, async (ctx) => {
    const { params } = byId.input(ctx);
    respond(ctx, 200, presentTemplate(await findOrNotFound(deps, ctx, params.id)));
  });

  router.patch('/:id', ...auth, update, async (ctx) => {
    const { params, query, body } = update.input(ctx);
    const current = await findOwnOrRefuse(deps, ctx, params.id);
    const merged = { ...templateContent(current), ...body };
    assertRules(merged);
    if (body.mcp_tools !== undefined) await assertOwnMcpServers(deps, userId(ctx), body.mcp_tools);
    const warnings = templateWarnings(deps.config, merged);
    // Only a new name is checked: a template keeps its own name even where duplicates from before remain.
    const rename = body.name !== undefined && body.name !== current.name ? body.name : undefined;
    if (isDryRun(query)) {
      if (rename !== undefined) await assertTemplateNameFree(deps.db, userId(ctx), rename, params.id);
      return respond(ctx, 200, withWarnings(presentTemplate({ ...current, ...body }), warnings));
    }
    const write = () => updateOwnTemplate(deps.db, userId(ctx), params.id, body);
    const updated =
      rename === undefined
        ? await write()
        : await writeWithTemplateName(deps.db, userId(ctx), rename, params.id, write);
    // Deleted between the read and the write: answer as for any unknown id.
    if (!updated) throw new NotFoundError(`agent template ${params.id} not found`);
    respond(ctx, 200, withWarnings(presentTemplate(updated), warnings));
  });

  router.delete('/:id', ...auth, byId, async (ctx) => {
    const { params } = byId.input(ctx);
    await findOwnOrRefuse(deps, ctx, params.id);
    if (!(await deleteOwnTemplate(deps.db, userId(ctx), params.id))) {
      throw new NotFoundError(`agent template ${params.id} not found`);
    }
    respond(ctx, 200, { id: params.id, deleted: true });
  });

  return router;
}

/** The template a create would store (its id is not kept: nothing is written). */
function dryRunTemplate(ownerId: string, content: TemplateContent): TemplateDoc {
  const now = new Date();
  return { _id: newId('tpl'), owner_id: ownerId, system: false, ...content, created_at: now, updated_at: now };
}

/** Unknown, ill-formed and other users' ids get the same 404. */
async function findOrNotFound(deps: ApiDeps, ctx: Context, id: string): Promise<TemplateDoc> {
  const doc = isId('tpl', id) ? await findVisibleTemplate(deps.db, userId(ctx), id) : null;
  if (!doc) throw new NotFoundError(`agent template ${id} not found`);
  return doc;
}

/** A template the caller may change: 404 as above, 403 for a (visible, read-only) system template. */
async function findOwnOrRefuse(deps: ApiDeps, ctx: Context, id: string): Promise<TemplateDoc> {
  const doc = await findOrNotFound(deps, ctx, id);
  if (doc.system) {
    throw new ForbiddenError(
      `agent template ${id} is a system template and read-only; create your own with POST /api/v1/agents`,
    );
  }
  return doc;
}

/** 400 naming the field when `mcp_tools` names a server that is not the caller's or a stdio server not declared. */
async function assertOwnMcpServers(
  deps: ApiDeps,
  ownerId: string,
  selections: TemplateContent['mcp_tools'],
): Promise<void> {
  const problems = await mcpToolProblems(
    deps.db,
    ownerId,
    [{ where: 'mcp_tools', selections }],
    Object.keys(deps.config.MCP_STDIO_SERVERS),
  );
  if (problems.length > 0) throw new BadRequestError(problems.slice(0, 5).join('; '), 'invalid_field');
}

function assertRules(content: TemplateContent): void {
  const problems = templateRuleProblems(content);
  if (problems.length > 0) throw new BadRequestError(problems.slice(0, 5).join('; '), 'invalid_field');
}
