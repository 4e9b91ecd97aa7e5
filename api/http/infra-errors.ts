/**
 * Decides whether an error means "a backing service is unreachable" (→ 503) rather than a bug (→ 500),
 * by the drivers' error classes and gRPC status codes, never by message text.
 */
import {
  MongoNetworkError,
  MongoServerSelectionError,
  MongoNetworkTimeoutError,
  MongoTopologyClosedError,
} from 'mongodb';
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';

export function classifyInfraError(err: unknown): 'MongoDB' | 'Temporal' | undefined {
  if (
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNetworkError ||
    err instanceof MongoNetworkTimeoutError ||
    err instanceof MongoTopologyClosedError
  ) {
    return 'MongoDB';
  }
  if (isTemporalUnavailable(err)) return 'Temporal';
  return undefined;
}

/**
 * gRPC codes of a Temporal call that did not go through but may on a retry. CANCELLED: a call past its deadline can end
 * that way (the server resets the stream: "Call cancelled"), as seen under load; the API's own cancellations (a long
 * poll's watch) never reach this check.
 * RESOURCE_EXHAUSTED: a limit of the server's that passes (its rate limits, a workflow's updates in flight).
 */
const TRANSIENT_CODES = new Set([
  grpcStatus.UNAVAILABLE,
  grpcStatus.DEADLINE_EXCEEDED,
  grpcStatus.CANCELLED,
  grpcStatus.RESOURCE_EXHAUSTED,
]);

export function isTemporalUnavailable(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    // An update call that got no answer in time (the SDK's class for both codes above, whatever its cause). The
    // update may still reach a worker later; the client asks again.
    if (cur instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
    const code = (cur as { code?: unknown }).code;
    if ((cur instanceof ServiceError || typeof code === 'number') && TRANSIENT_CODES.has(code as grpcStatus)) {
      return true;
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}
