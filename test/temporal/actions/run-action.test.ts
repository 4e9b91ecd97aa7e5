/** runAction: run-mode validation before any side effect, and workflow-only actions refused. */
import { runAction } from '../../../temporal/actions/run-action';
import { NonRetryableError, toApplicationFailure } from '../../../temporal/failures';
import { runTool } from '../../../temporal/tools/run-tool';
import { actionContext, toolContext } from '../../helpers/effects-context';
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

describe('runTool', () => {
  it('parses the arguments and executes', async () => {
    await expect(runTool('calculator', { expression: '2 + 2' }, toolContext())).resolves.toEqual({ result: 4 });
  });

  it('refuses unknown tools and bad arguments as invalid_input', async () => {
    for (const [name, args] of [
      ['rm_rf', {}],
      ['calculator', { expression: 1 }],
      ['calculator', { expression: '1', extra: 1 }],
      ['current_time', 'UTC'],
    ] as const) {
      const err: unknown = await runTool(name, args, toolContext()).catch((e: unknown) => e);
      expect(toApplicationFailure(err)).toMatchObject({ type: 'invalid_input', nonRetryable: true });
    }
  });
});
