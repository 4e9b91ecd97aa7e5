/**
 * The Temporal client retries a call that failed as unavailable from a timer of its own (makeGrpcRetryInterceptor).
 * When the connection is closed while such a timer waits — an API shutting down while Temporal is away, a test file
 * closing its client — the retry asks the closed channel for a call, which throws "Channel has been shut down" from
 * that timer: an uncaught exception in whatever runs next in the process. This interceptor sits below the retry one
 * and turns that throw into the call's end (CANCELLED, which the retry interceptor does not retry), so the caller's
 * promise rejects instead.
 */
import { InterceptingCall, Metadata, status, type Interceptor } from '@grpc/grpc-js';

export const closedChannelGuard: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    const details = `the Temporal connection is closed (${err instanceof Error ? err.message : String(err)})`;
    // Never passes anything on: start ends the call at once; the messages and the half-close after it wait forever.
    return new InterceptingCall(null as never, {
      start: (_metadata, listener) =>
        listener.onReceiveStatus({ code: status.CANCELLED, details, metadata: new Metadata() }),
      sendMessage: () => undefined,
      halfClose: () => undefined,
      cancel: () => undefined,
    });
  }
};
