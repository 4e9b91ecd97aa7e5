/**
 * Runs of action steps end to end: the real API starts a run on the real Temporal server, a real worker executes it
 * against a real SMTP server and a real HTTP sink, and the status endpoint reports what happened.
 */
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';
import { messageIdFor } from '../../temporal/mail/message';

describe('action steps on the real stack', () => {
  let smtp: TestSmtp;
  let sink: HttpSink;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    sink = await startHttpSink();
    api = await startTestApi(testConfig({ SMTP_URL: smtp.url, HTTP_ALLOWED_HOSTS: sink.host }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await sink?.close();
    await smtp?.close();
  });

  it('send_email: delivers one message with a Message-ID stable per run and step', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'mail',
      steps: [
        {
          id: 'notify',
          template_id: tpl.send_email._id,
          config: { to: '{{input.to}}', subject: 'Hello {{input.name}}', text: 'Body for {{input.name}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { to: 'ada@example.test', name: 'Ada' });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    // The run started when its first step did, and ended after that.
    expect(status.started_at).toBe(status.steps[0]?.started_at);
    expect(Date.parse(status.completed_at ?? '')).toBeGreaterThanOrEqual(Date.parse(status.started_at ?? ''));
    const mails = await smtp.waitForMessages(1);
    const mail = mails.find((m) => m.parsed.subject === 'Hello Ada');
    expect(mail?.envelope.to).toEqual(['ada@example.test']);
    expect(mail?.parsed.text?.trim()).toBe('Body for Ada');
    // Derived from `<run id>:<step id>`, so every retry of this step sends the same Message-ID.
    expect(mail?.messageId).toBe(messageIdFor(`${runId}:notify`, api.config.SMTP_FROM));
    expect((status.outputs.notify as { message_id: string }).message_id).toBe(mail?.messageId);
  });

  it('http_request: sends the idempotency key and returns status and parsed body', async () => {
    sink.route('/hook', { status: 201, body: { received: true } });
    const wf = await createWorkflow(api, user, {
      name: 'hook',
      steps: [
        {
          id: 'call',
          template_id: tpl.http_request._id,
          config: { method: 'POST', url: sink.url('/hook'), body: { n: '{{input.n}}' } },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { n: 7 });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    const [req] = sink.requestsTo('/hook');
    expect(req?.headers['idempotency-key']).toBe(`${runId}:call`);
    expect(JSON.parse(req?.text ?? '')).toEqual({ n: 7 });
    expect(status.outputs.call).toMatchObject({ status: 201, body: { received: true } });
  });

  it('transform and delay: shape data and wait on a durable timer', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'shape',
      steps: [
        { id: 'pause', template_id: tpl.delay._id, config: { seconds: 1 } },
        {
          id: 'sum',
          template_id: tpl.transform._id,
          config: { expression: '{"total": $sum(items.price)}', data: '{{input.order}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { order: { items: [{ price: 2 }, { price: 3 }] } });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.sum).toEqual({ total: 5 });
    expect(status.outputs.pause).toMatchObject({ waited_seconds: 1 });
  });

  it('a 5-step mixed workflow passes data between steps through templates', async () => {
    sink.route('/users/42', { status: 200, body: { id: 42, name: 'Grace', email: 'grace@example.test' } });
    sink.route('/audit', { status: 200, body: { ok: true } });
    const wf = await createWorkflow(api, user, {
      name: 'mixed',
      config: {
        input_schema: {
          type: 'object',
          required: ['user_id'],
          properties: { user_id: { type: 'integer' } },
        },
      },
      steps: [
        { id: 'fetch', template_id: tpl.http_request._id, config: { url: `${sink.url('/users')}/{{input.user_id}}` } },
        {
          id: 'pick',
          template_id: tpl.transform._id,
          config: { expression: '{"to": email, "greeting": "Hi " & name}', data: '{{steps.fetch.output.body}}' },
        },
        { id: 'breathe', template_id: tpl.delay._id, config: { seconds: 0.2 } },
        {
          id: 'mail',
          template_id: tpl.send_email._id,
          config: {
            to: '{{steps.pick.output.to}}',
            subject: 'Mixed {{input.user_id}}',
            text: '{{steps.pick.output.greeting}}',
          },
        },
        {
          id: 'audit',
          template_id: tpl.http_request._id,
          config: {
            method: 'POST',
            url: sink.url('/audit'),
            body: { message_id: '{{steps.mail.output.message_id}}', user: '{{steps.fetch.output.body.id}}' },
          },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { user_id: 42 });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.steps.map((s) => s.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
    const mail = (await smtp.waitForMessages(1)).find((m) => m.parsed.subject === 'Mixed 42');
    expect(mail?.parsed.text?.trim()).toBe('Hi Grace');
    const [audit] = sink.requestsTo('/audit');
    expect(JSON.parse(audit?.text ?? '')).toEqual({ message_id: mail?.messageId, user: 42 });
  });

  it('a non-retryable failure fails the run naming the step', async () => {
    sink.route('/missing', { status: 404, body: { error: 'nope' } });
    const wf = await createWorkflow(api, user, {
      name: 'fails',
      steps: [
        { id: 'first', template_id: tpl.transform._id, config: { expression: '1 + 1' } },
        {
          id: 'lookup',
          template_id: tpl.http_request._id,
          config: { url: sink.url('/missing') },
          retry: { max_attempts: 5 },
        },
        { id: 'never', template_id: tpl.transform._id, config: { expression: '2' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'lookup', reason: 'non_retryable', code: 'http_4xx' });
    expect(status.steps.map((s) => [s.id, s.status])).toEqual([
      ['first', 'completed'],
      ['lookup', 'failed'],
      ['never', 'skipped'],
    ]);
    expect(status.steps[1]?.attempts).toBe(1);
    expect(sink.requestsTo('/missing')).toHaveLength(1);
  });

  it('a transient failure (503 then 200) completes with 2 attempts', async () => {
    sink.route('/flaky', [
      { status: 503, body: 'busy' },
      { status: 200, body: { fine: true } },
    ]);
    const wf = await createWorkflow(api, user, {
      name: 'flaky',
      steps: [{ id: 'call', template_id: tpl.http_request._id, config: { url: sink.url('/flaky') } }],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.steps[0]?.attempts).toBe(2);
    const hits = sink.requestsTo('/flaky');
    expect(hits).toHaveLength(2);
    expect(hits[0]?.headers['idempotency-key']).toBe(hits[1]?.headers['idempotency-key']);
  });

  it('a missing reference fails the step instead of rendering an empty string', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'missing ref',
      steps: [
        { id: 'a', template_id: tpl.transform._id, config: { expression: '{"x": 1}' } },
        { id: 'b', template_id: tpl.transform._id, config: { expression: '$', data: '{{steps.a.output.y}}' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'b', reason: 'missing_reference' });
    expect(status.error?.message).toContain('{{steps.a.output.y}}');
  });

  it('a large output is stored by reference and shown resolved', async () => {
    sink.route('/big', { status: 200, body: { blob: 'x'.repeat(200 * 1024) } });
    const wf = await createWorkflow(api, user, {
      name: 'big',
      steps: [
        { id: 'get', template_id: tpl.http_request._id, config: { url: sink.url('/big') } },
        {
          id: 'len',
          template_id: tpl.transform._id,
          config: { expression: '$length(blob)', data: '{{steps.get.output.body}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.len).toBe(200 * 1024);
    expect((status.outputs.get as { body: { blob: string } }).body.blob).toHaveLength(200 * 1024);
    // The value appears once in the body: in `outputs`; the step carries a marker with its size.
    expect(status.steps[0]?.output).toEqual({ stored_by_reference: true, bytes: expect.any(Number) });
    const stored = await api.database.db.collection('runs').findOne({ _id: runId as never });
    expect(stored?.steps[0].output_json).toContain('stepwise_blob');
  });

  it('R7: a 3 MB step output ends in a defined state (stored by reference, run completed)', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'huge',
      steps: [
        { id: 'make', template_id: tpl.transform._id, config: { expression: '$join([1..3000].$pad("", 1000, "x"))' } },
        {
          id: 'measure',
          template_id: tpl.transform._id,
          config: { expression: '$length($)', data: '{{steps.make.output}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.measure).toBe(3_000_000);
    expect(status.steps[0]?.output).toMatchObject({ stored_by_reference: true });
    expect(await api.database.db.collection('blobs').countDocuments({ run_id: runId })).toBe(1);
  });
});
