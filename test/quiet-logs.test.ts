/**
 * `npm test` output stays readable: failures the tests cause on purpose are not printed, anything else the Temporal SDK
 * warns about is one line, and STEPWISE_TEST_LOG_LEVEL=debug brings the full logs back.
 */
import { testLogLevel, testTemporalLogger } from './helpers/test-logging';

function captureStderr(): { text(): string; restore(): void } {
  let out = '';
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  return { text: () => out, restore: () => spy.mockRestore() };
}

function failure(): Error {
  const error = new Error('GET http://127.0.0.1:1/missing answered 404');
  error.name = 'ApplicationFailure';
  return error;
}

describe('test logging', () => {
  it('logs at warn unless STEPWISE_TEST_LOG_LEVEL says otherwise', () => {
    expect(testLogLevel({})).toBe('WARN');
    expect(testLogLevel({ STEPWISE_TEST_LOG_LEVEL: 'debug' })).toBe('DEBUG');
    expect(testLogLevel({ STEPWISE_TEST_LOG_LEVEL: 'loud' })).toBe('WARN');
  });

  it("drops the SDK's reports of runs failing on purpose, and prints other warnings as one line", () => {
    const stderr = captureStderr();
    try {
      const logger = testTemporalLogger('WARN');
      logger.warn('Activity failed', { workflowId: 'run_a', error: failure() });
      logger.warn('Workflow failed', { workflowId: 'run_a', error: failure() });
      logger.info('Worker state changed', { state: 'RUNNING' });
      logger.warn('Workflow task failed', { workflowId: 'run_b', error: failure() });
    } finally {
      stderr.restore();
    }
    expect(stderr.text()).toBe(
      '[temporal WARN] Workflow task failed (run_b): ApplicationFailure: GET http://127.0.0.1:1/missing answered 404\n',
    );
  });

  it('prints everything, stacks included, at debug', () => {
    const lines: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    const stderr = captureStderr();
    try {
      testTemporalLogger('DEBUG').warn('Activity failed', { workflowId: 'run_a', error: failure() });
    } finally {
      stderr.restore();
      spy.mockRestore();
    }
    expect(lines.join('\n') + stderr.text()).toContain('Activity failed');
  });
});
