/**
 * Which errors of the drivers mean "a backing service did not answer" (503) rather than a bug (500). The errors are
 * the SDKs' own classes, built as the SDKs build them from a gRPC status.
 */
import { status as grpcStatus, Metadata, type ServiceError as GrpcError } from '@grpc/grpc-js';
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { classifyInfraError, isTemporalUnavailable } from '../../../api/http/infra-errors';

function grpcError(code: grpcStatus, details: string): GrpcError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() });
}

describe('isTemporalUnavailable', () => {
  it('an update call that got no answer in time is unavailable, cancelled by the server or past its deadline', () => {
    for (const code of [grpcStatus.CANCELLED, grpcStatus.DEADLINE_EXCEEDED]) {
      const err = new WorkflowUpdateRPCTimeoutOrCancelledError('Workflow update call timeout or cancelled', {
        cause: grpcError(code, 'no answer'),
      });
      expect(isTemporalUnavailable(err)).toBe(true);
      expect(classifyInfraError(err)).toBe('Temporal');
    }
  });

  it('a call the server could not take is unavailable; other service errors are not', () => {
    const wrapped = (code: grpcStatus) => new ServiceError('Failed to start Workflow', { cause: grpcError(code, 'x') });
    expect(isTemporalUnavailable(wrapped(grpcStatus.UNAVAILABLE))).toBe(true);
    expect(isTemporalUnavailable(wrapped(grpcStatus.DEADLINE_EXCEEDED))).toBe(true);
    expect(isTemporalUnavailable(wrapped(grpcStatus.RESOURCE_EXHAUSTED))).toBe(true);
    // The server may reset a call past its deadline: "Call cancelled".
    expect(isTemporalUnavailable(wrapped(grpcStatus.CANCELLED))).toBe(true);
    expect(isTemporalUnavailable(wrapped(grpcStatus.INVALID_ARGUMENT))).toBe(false);
    expect(isTemporalUnavailable(wrapped(grpcStatus.NOT_FOUND))).toBe(false);
    expect(isTemporalUnavailable(new Error('a bug'))).toBe(false);
    expect(classifyInfraError(new Error('a bug'))).toBeUndefined();
  });
});
