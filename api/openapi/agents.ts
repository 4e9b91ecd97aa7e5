/** OpenAPI paths of /api/v1/agents, from the schemas the routes validate with. */
import { warningsField } from '../commands/model-warnings';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { dryRunQuery } from '../schemas/dry-run';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { templateView } from '../presenters/template';
import {
  actionView,
  createTemplateBody,
  listTemplatesQuery,
  templateIdParams,
  toolView,
  updateTemplateBody,
} from '../schemas/agents';

const tags = ['agents'];
/** A written template: the stored view, with warnings when it will not run as it stands. */
const templateWritten = templateView.extend({ warnings: warningsField });
const deleted = z.strictObject({ id: z.string(), deleted: z.literal(true) });

export const agentsPaths: ZodOpenApiPathsObject = {
  '/api/v1/agents': {
    get: {
      tags,
      summary: 'List agent templates: system templates and your own',
      description: 'Ordered oldest first (system templates first); page with `limit` and the `Link` header.',
      security: BEARER,
      requestParams: { query: listTemplatesQuery },
      responses: { ...ok(200, 'One page of templates', z.array(templateView), { paged: true }), ...errors(400, 401) },
    },
    post: {
      tags,
      summary: 'Create an agent template',
      description: 'Names are unique among your templates: 409 naming the template that has the name.',
      security: BEARER,
      requestParams: { query: dryRunQuery },
      requestBody: jsonRequest(createTemplateBody),
      responses: {
        ...ok(
          200,
          'Dry run: the template as it would be stored, without an id (nothing written)',
          templateView.omit({ id: true }).extend({ warnings: warningsField }),
        ),
        ...ok(201, 'The stored template', templateWritten, { location: 'Path of the new template.' }),
        ...errors(400, 401, 409, 413, 415),
      },
    },
  },
  '/api/v1/agents/tools': {
    get: {
      tags,
      summary: 'List the tools agents can use (public)',
      responses: { ...ok(200, 'Every registered tool', z.array(toolView)) },
    },
  },
  '/api/v1/agents/actions': {
    get: {
      tags,
      summary: 'List the action types of action templates (public)',
      responses: { ...ok(200, 'Every action type', z.array(actionView)) },
    },
  },
  '/api/v1/agents/{id}': {
    get: {
      tags,
      summary: 'Read one agent template with its full configuration',
      security: BEARER,
      requestParams: { path: templateIdParams },
      responses: { ...ok(200, 'The template', templateView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Change one of your own templates (system templates are read-only)',
      description: 'A new name another of your templates has is a 409 naming that template.',
      security: BEARER,
      requestParams: { path: templateIdParams, query: dryRunQuery },
      requestBody: jsonRequest(updateTemplateBody),
      responses: {
        ...ok(200, 'The changed template', templateWritten),
        ...errors(400, 401, 403, 404, 405, 409, 413, 415),
      },
    },
    delete: {
      tags,
      summary: 'Delete one of your own templates (system templates are read-only)',
      description: 'Runs already started keep their snapshot of the template.',
      security: BEARER,
      requestParams: { path: templateIdParams },
      responses: { ...ok(200, 'Deleted', deleted), ...errors(401, 403, 404, 405) },
    },
  },
};
