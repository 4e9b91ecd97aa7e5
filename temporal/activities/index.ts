/**
 * The activities the worker registers, built by one factory from explicit dependencies (no module singletons):
 * the only code that does I/O during a run.
 */
import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { Mailer } from '../mail/mailer';
import type { WorkerMetrics } from '../metrics';
import { createActionStepActivity } from './action-step';
import { createCallModelActivity } from './agent/call-model';
import { createCallToolActivity } from './agent/call-tool';
import { createCompactThreadActivity } from './agent/compact-thread';
import { createThreadStepActivities } from './agent/thread-step';
import { createUpdateMemoryActivity } from './agent/update-memory';
import { createMcpApprovalActivities } from './agent/mcp-approval';
import { createMcpToolActivities } from './agent/mcp-tools';
import { createProjectionActivities } from './projection';
import { createPureStepActivity } from './pure-step';
import { createExperimentActivities } from './experiment';
import { createScheduledRunActivities } from './scheduled-run';
import { createWebhookActivities } from './webhook';

export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  mailer: Mailer;
  expressions: ExpressionEvaluator;
  metrics: WorkerMetrics;
  /** Set only with tracing on: model calls, tools and actions get child spans. */
  tracer?: Tracer;
  /** Starts a thread's next queued turn when one ends (absent: queued turns wait for the API's repair). */
  temporal?: Client;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createActionStepActivity(deps),
    ...createPureStepActivity(deps),
    ...createProjectionActivities(deps),
    ...createWebhookActivities(deps),
    ...createScheduledRunActivities(deps),
    ...createExperimentActivities(deps),
    callModel: createCallModelActivity(deps),
    callTool: createCallToolActivity(deps),
    compactThread: createCompactThreadActivity(deps),
    updateMemory: createUpdateMemoryActivity(deps),
    ...createThreadStepActivities(deps),
    ...createMcpToolActivities(deps),
    ...createMcpApprovalActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
