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
import { ServiceError } from '@temporalio/client';
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

export function isTemporalUnavailable(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (
      (cur instanceof ServiceError || typeof code === 'number') &&
      (code === grpcStatus.UNAVAILABLE || code === grpcStatus.DEADLINE_EXCEEDED)
    ) {
      return true;
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}
