/** Contexts for calling actions and tools directly in tests, wired to real local servers. */
import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../config';
import { DEFAULT_EGRESS } from '../../domain/egress';
import type { ActionContext } from '../../temporal/actions/types';
import { createMailer, type Mailer } from '../../temporal/mail/mailer';
import type { ToolContext } from '../../temporal/tools/types';
import { noExpressions } from './expressions';

export interface EffectsEnv {
  /** SMTP_URL (e.g. a test SMTP server's url). */
  smtpUrl?: string;
  /** HTTP_ALLOWED_HOSTS entries (e.g. an HTTP sink's host). */
  allowedHosts?: string[];
}

export const TEST_FROM = 'Stepwise Tests <stepwise@example.com>';

export function effectsConfig(env: EffectsEnv = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SMTP_FROM: TEST_FROM,
    ...(env.smtpUrl ? { SMTP_URL: env.smtpUrl } : {}),
    ...(env.allowedHosts ? { HTTP_ALLOWED_HOSTS: env.allowedHosts.join(',') } : {}),
  });
}

export function testMailer(config: Config): Mailer {
  return createMailer(config.SMTP_URL, config.SMTP_FROM);
}

export function toolContext(env: EffectsEnv = {}, extra: Partial<ToolContext> = {}): ToolContext {
  const config = effectsConfig(env);
  // The agent default (e-mail nobody, any public host); tests that send mail pass their own `egress`.
  return {
    config,
    mailer: testMailer(config),
    expressions: noExpressions,
    idempotencyKey: `test:${randomUUID()}`,
    egress: DEFAULT_EGRESS,
    ...extra,
  };
}

export function actionContext(env: EffectsEnv = {}, extra: Partial<ActionContext> = {}): ActionContext {
  const config = effectsConfig(env);
  const runId = extra.runId ?? `run_${randomUUID().slice(0, 8)}`;
  const stepId = extra.stepId ?? 'step';
  return {
    config,
    mailer: testMailer(config),
    expressions: noExpressions,
    runId,
    stepId,
    idempotencyKey: `${runId}:${stepId}`,
    heartbeat: () => undefined,
    ...extra,
  };
}
