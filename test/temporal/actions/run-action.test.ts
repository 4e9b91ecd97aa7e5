/** runAction: run-mode validation before any side effect, and workflow-only actions refused. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { runAction } from '../../../temporal/actions/run-action';
import { NonRetryableError, toActivityError, toApplicationFailure } from '../../../temporal/failures';
import { actionContext } from '../../helpers/effects-context';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';

let sink: HttpSink;
beforeAll(async () => {
  sink = await startHttpSink({ '/ok': { body: { fine: true } } });
});
afterAll(() => sink.close());

describe('runAction', () => {
  it('validates, fills defaults and executes', async () => {
    const out = await runAction('http_request', { url: sink.url('/ok') }, actionContext({ allowedHosts: [sink.host] }));
    expect(out).toMatchObject({ status: 200, body: { fine: true } });
    expect(sink.requestsTo('/ok')[0]?.method).toBe('GET');
  });

  it('refuses an invalid config before any request, naming the field', async () => {
    const err: unknown = await runAction(
      'http_request',
      { url: sink.url('/ok'), timeout_seconds: 'soon' },
      actionContext({ allowedHosts: [sink.host] }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect((err as Error).message).toContain('config.timeout_seconds');
    expect(toApplicationFailure(err)).toMatchObject({ type: 'invalid_config', nonRetryable: true });
    expect(sink.requestsTo('/ok')).toHaveLength(1);
  });

  it.each(['delay', 'approval'] as const)('refuses %s, which the workflow performs', async (type) => {
    const config = type === 'delay' ? { seconds: 1 } : { message: 'ok?' };
    const err: unknown = await runAction(type, config, actionContext()).catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'not_supported', nonRetryable: true });
  });
});

describe('runAction inside an activity', () => {
  const quiet = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  /** The shape every action activity has: run, and rethrow what failures.ts decides. */
  const activity = (url: string) => async () => {
    try {
      const ctx = Context.current();
      return await runAction(
        'http_request',
        { url },
        actionContext(
          { allowedHosts: [sink.host] },
          { signal: ctx.cancellationSignal, heartbeat: () => ctx.heartbeat() },
        ),
      );
    } catch (err) {
      throw toActivityError(err);
    }
  };

  it('a cancelled activity stops the request and reports the cancellation, not a failure', async () => {
    sink.route('/slow-cancel', { hang: true });
    const env = quiet();
    const pending = env.run(activity(sink.url('/slow-cancel')));
    await sink.waitForRequests(1, '/slow-cancel');
    env.cancel();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('a 404 becomes a non-retryable ApplicationFailure', async () => {
    sink.route('/gone', { status: 404 });
    const err: unknown = await quiet()
      .run(activity(sink.url('/gone')))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'http_4xx', nonRetryable: true });
  });
});
