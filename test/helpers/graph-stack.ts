/**
 * One real stack for the graph tests: scripted LLM server, HTTP sink, SMTP server, the API and a worker, a user and
 * the action templates — started once per test file and stopped with it.
 */
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';
import { startHttpSink, type HttpSink } from './http-sink';
import { startLlmServer, type LlmServer } from './llm-server';
import { startTestSmtp, type TestSmtp } from './smtp';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from './stack';
import { createTestUser, type TestUser } from './users';
import { actionTemplates } from './workflows';
import type { Config } from '../../config';

export interface GraphStack {
  llm: LlmServer;
  sink: HttpSink;
  smtp: TestSmtp;
  api: TestApi;
  worker: TestWorker;
  user: TestUser;
  tpl: Record<ActionType, TemplateDoc>;
  /** Restarts the worker (after a test stopped it). */
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

export async function startGraphStack(overrides: Partial<Record<keyof Config, string>> = {}): Promise<GraphStack> {
  const llm = await startLlmServer();
  const sink = await startHttpSink();
  const smtp = await startTestSmtp();
  const api = await startTestApi(
    testConfig({
      HTTP_ALLOWED_HOSTS: sink.host,
      SMTP_URL: smtp.url,
      OPENAI_API_KEY: 'sk-test-graph',
      OPENAI_BASE_URL: llm.baseUrl,
      ...overrides,
    }),
  );
  const stack: GraphStack = {
    llm,
    sink,
    smtp,
    api,
    worker: await startTestWorker(api.config, api.database),
    user: await createTestUser(api.database.db),
    tpl: {} as Record<ActionType, TemplateDoc>,
    async restartWorker() {
      stack.worker = await startTestWorker(api.config, api.database);
    },
    async stop() {
      await stack.worker?.stop().catch(() => undefined);
      await api.close();
      await Promise.all([llm.close(), sink.close(), smtp.close()]);
    },
  };
  stack.tpl = await actionTemplates(api.database.db, stack.user.id);
  return stack;
}
