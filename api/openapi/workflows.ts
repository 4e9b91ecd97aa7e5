/** OpenAPI paths of /api/v1/workflows and their runs, from the schemas the routes validate with. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { dryRunQuery } from '../schemas/dry-run';
import { warningsField } from '../commands/model-warnings';
import { BEARER, errorResponse, errors, jsonRequest, ok } from './kit';
import { executionView, runSummaryView, runView } from '../../shared/run-view/view';
import { workflowView } from '../presenters/workflow';
import { pageQuery } from '../http/pagination';
import {
  approveBody,
  createWorkflowBody,
  rerunBody,
  rerunOverrides,
  runIdParams,
  startRunBody,
  statusQuery,
  stepExecutionsParams,
  updateWorkflowBody,
  workflowIdParams,
} from '../schemas/workflows';

const tags = ['workflows'];
/** A written workflow: the stored view, with warnings when it will not run as it stands. */
const workflowWritten = workflowView.extend({ warnings: warningsField });
const runTags = ['runs'];
const deleted = z.strictObject({ id: z.string(), deleted: z.literal(true) });
const started = z.strictObject({
  run_id: z.string(),
  workflow_id: z.string(),
  status: z.literal('queued'),
  status_url: z.string().meta({ description: 'Absolute URL of the status endpoint (also in `Location`).' }),
});
const idempotencyHeader = z.strictObject({
  'Idempotency-Key': z
    .string()
    // Spaces and tabs around a field value are not part of it (HTTP strips them), so the document allows them.
    .regex(/^[ \t]*[\x21-\x7e]{1,200}[ \t]*$/)
    .optional()
    .meta({
      description:
        'Same key + same body → the same run and answer; other body → 422. Kept 7 days. 1–200 visible ASCII characters.',
    }),
});

export const workflowsPaths: ZodOpenApiPathsObject = {
  '/api/v1/workflows': {
    get: {
      tags,
      summary: 'List your workflows',
      security: BEARER,
      requestParams: { query: pageQuery },
      responses: { ...ok(200, 'One page of workflows', z.array(workflowView), { paged: true }), ...errors(400, 401) },
    },
    post: {
      tags,
      summary: 'Create a workflow',
      description:
        'Validated on write: unique slug step ids, visible templates and sub-workflows, known tools, ' +
        '`{{steps.x…}}` only to steps that finish first (dependencies, direct or indirect; without `depends_on`, ' +
        'earlier steps), no dependency cycles, conditions that parse, maps over lists, bounded loops, ' +
        '`{{input.y}}` within config.input_schema, action configs per action type, at most 50 steps.',
      security: BEARER,
      requestParams: { query: dryRunQuery },
      requestBody: jsonRequest(createWorkflowBody),
      responses: {
        ...ok(
          200,
          'Dry run: the workflow as it would be stored, without an id (nothing written)',
          workflowView.omit({ id: true }).extend({ warnings: warningsField }),
        ),
        ...ok(201, 'The stored workflow', workflowWritten, { location: 'Path of the new workflow.' }),
        ...errors(400, 401, 413, 415),
      },
    },
  },
  '/api/v1/workflows/{id}': {
    get: {
      tags,
      summary: 'Read one workflow with its steps and configuration',
      security: BEARER,
      requestParams: { path: workflowIdParams },
      responses: { ...ok(200, 'The workflow', workflowView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Change a workflow (steps and config are replaced as a whole); runs in flight keep their snapshot',
      security: BEARER,
      requestParams: { path: workflowIdParams, query: dryRunQuery },
      requestBody: jsonRequest(updateWorkflowBody),
      responses: { ...ok(200, 'The updated workflow', workflowWritten), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete a workflow (its runs stay readable by run id)',
      security: BEARER,
      requestParams: { path: workflowIdParams },
      responses: { ...ok(200, 'Deleted', deleted), ...errors(401, 404) },
    },
  },
  '/api/v1/workflows/{id}/runs': {
    get: {
      tags: runTags,
      summary: "List a workflow's runs, newest first",
      security: BEARER,
      requestParams: { path: workflowIdParams, query: pageQuery },
      responses: { ...ok(200, 'One page of runs', z.array(runSummaryView), { paged: true }), ...errors(400, 401, 404) },
    },
  },
  '/api/v1/workflows/{id}/run': {
    post: {
      tags: runTags,
      summary: 'Start a run',
      description:
        'The optional `input` is validated against config.input_schema. Rate limited per key, and refused with 429 ' +
        '`concurrent_runs_exceeded` while you have USER_MAX_CONCURRENT_RUNS runs that have not ended.',
      security: BEARER,
      requestParams: { path: workflowIdParams, header: idempotencyHeader },
      requestBody: { content: { 'application/json': { schema: startRunBody } } },
      responses: {
        ...ok(202, 'The run was accepted', started, { location: "The run's status URL (as `status_url`)." }),
        ...errors(400, 401, 404, 409, 413, 415, 422),
        '429': {
          ...errorResponse(429),
          description:
            'Too many run starts per minute (`rate_limited`), or `concurrent_runs_exceeded`: you already have ' +
            'USER_MAX_CONCURRENT_RUNS runs that have not ended. Retry after `Retry-After` seconds.',
        },
      },
    },
  },
  '/api/v1/workflows/runs/{runId}/status': {
    get: {
      tags: runTags,
      summary: 'Status, outputs, steps, error, usage and Temporal link of a run',
      description:
        'Answers from the run projection (also while every worker is down); a run Temporal has closed is never ' +
        'reported running. `?wait=<seconds>` long-polls until the status changes; with `&until=end`, until the ' +
        'run has ended.',
      security: BEARER,
      requestParams: { path: runIdParams, query: statusQuery },
      responses: { ...ok(200, 'The run', runView), ...errors(400, 401, 404) },
    },
  },
  '/api/v1/workflows/runs/{runId}/steps/{stepId}/executions': {
    get: {
      tags: runTags,
      summary: 'The items of a map step or the iterations of a loop step, in order',
      description:
        'Each execution (`<step>[<index>]`, `<step>#<iteration>`) with its own status, attempts, output and error. ' +
        'The status endpoint shows the first 50 and the counts; this pages through all of them.',
      security: BEARER,
      requestParams: { path: stepExecutionsParams, query: pageQuery },
      responses: {
        ...ok(200, 'One page of executions', z.array(executionView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/workflows/runs/{runId}/cancel': {
    post: {
      tags: runTags,
      summary: 'Cancel a run (the running activity is cancelled; the run ends `cancelled`)',
      security: BEARER,
      requestParams: { path: runIdParams },
      responses: {
        ...ok(202, 'Cancellation requested', z.strictObject({ run_id: z.string(), cancel_requested: z.literal(true) })),
        ...errors(401, 404, 409),
      },
    },
  },
  '/api/v1/workflows/runs/{runId}/approve': {
    post: {
      tags: runTags,
      summary: 'Approve or reject a waiting approval step (a rejection fails the run with the comment)',
      description:
        'An agent step waiting before a call of a destructive MCP tool is decided the same way: approved, the call ' +
        'is made once; rejected, it is not made and the model is told the user declined.',
      security: BEARER,
      requestParams: { path: runIdParams },
      requestBody: jsonRequest(approveBody),
      responses: {
        ...ok(
          200,
          'The decision was accepted by the run',
          z.strictObject({ run_id: z.string(), step_id: z.string(), approved: z.boolean() }),
        ),
        ...errors(400, 401, 404, 409, 413, 415),
      },
    },
  },
  '/api/v1/workflows/runs/{runId}/rerun': {
    post: {
      tags: runTags,
      summary: 'Rerun an ended run from a step, reusing the recorded outputs of the steps before it',
      description:
        'A new run of the same snapshot (not the workflow as edited since). The chosen step (default: the first ' +
        'that did not complete), every step that depends on it and every step that had not completed run again; ' +
        'the other completed steps keep their outputs and make no model call, e-mail or HTTP request ' +
        '(`reused_from_run_id` on their status). The runs link to each other (`rerun_of`, `reruns`). ' +
        '`overrides` changes agent steps (their model) for the new run, to recover from a configuration mistake ' +
        'frozen into the snapshot. `Idempotency-Key` as on a start; 409 while the run has not ended or for a ' +
        'sub-workflow run.',
      security: BEARER,
      requestParams: { path: runIdParams, header: idempotencyHeader },
      requestBody: { content: { 'application/json': { schema: rerunBody } } },
      responses: {
        ...ok(
          202,
          'The rerun was accepted',
          started.extend({
            rerun_of: z.string(),
            from_step: z.string(),
            reused_steps: z.array(z.string()).meta({ description: 'Steps whose outputs were taken over.' }),
            overrides: rerunOverrides.nullable().meta({ description: 'The overrides the rerun applied, or null.' }),
          }),
          { location: "The new run's status URL (as `status_url`)." },
        ),
        ...errors(400, 401, 404, 409, 413, 415, 422),
        '429': {
          ...errorResponse(429),
          description: 'As a run start: `rate_limited` or `concurrent_runs_exceeded`.',
        },
      },
    },
  },
};
