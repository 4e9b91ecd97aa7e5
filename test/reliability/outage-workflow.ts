/**
 * The workflow the outage tests (R3 Temporal, R4 MongoDB) run: an HTTP call, a durable timer that spans the outage,
 * an e-mail and a second HTTP call, so that each run has work left on both sides of the outage.
 */
import type { Db } from 'mongodb';
import type { HttpSink } from '../helpers/http-sink';
import type { TestUser } from '../helpers/users';
import { actionTemplates } from '../helpers/workflows';
import type { JsonObject } from '../../domain/json';

export const OUTAGE_STEPS = ['first', 'pause', 'mail', 'last'] as const;

export async function outageWorkflowBody(
  db: Db,
  user: TestUser,
  sink: HttpSink,
  pauseSeconds: number,
): Promise<JsonObject> {
  const tpl = await actionTemplates(db, user.id);
  const retry = { max_attempts: 10 };
  return {
    name: 'outage',
    steps: [
      {
        id: 'first',
        template_id: tpl.http_request._id,
        retry,
        config: { method: 'POST', url: sink.url('/first/{{input.n}}'), body: { n: '{{input.n}}' } },
      },
      { id: 'pause', template_id: tpl.delay._id, config: { seconds: pauseSeconds } },
      {
        id: 'mail',
        template_id: tpl.send_email._id,
        retry,
        config: { to: 'r{{input.n}}@example.test', subject: 'after the pause {{input.n}}', text: 'done' },
      },
      {
        id: 'last',
        template_id: tpl.http_request._id,
        retry,
        config: { method: 'POST', url: sink.url('/last/{{input.n}}'), body: { n: '{{input.n}}' } },
      },
    ],
  };
}
