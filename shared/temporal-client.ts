/**
 * The API's Temporal client. The connection is lazy so the API starts (and answers 503) while Temporal is down,
 * and reconnects by itself when it comes back.
 */
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { closedChannelGuard } from './closed-channel-guard';
import { createDataConverter } from './codec/data-converter';
import type { CodecKey } from '../domain/codec-keys';

export interface TemporalClientOptions {
  address: string;
  namespace: string;
  /** PAYLOAD_CODEC_KEYS: what the client writes is encrypted with the first, what it reads opens with any. */
  codecKeys: readonly CodecKey[];
  /** Tracing on: starts and signals carry the active trace context into the workflow (its headers). */
  tracing?: boolean;
  /**
   * Called once per gRPC request the client sends to Temporal (each retry attempt too), with the method's name
   * (`StartWorkflowExecution`): what round trips a request costs. Unset: nothing counted.
   */
  onCall?: (method: string) => void;
}

export function createTemporalClient(opts: TemporalClientOptions): Client {
  const connection = Connection.lazy({
    address: opts.address,
    connectTimeout: 2_000,
    // The SDK's default retries, then the guard for a retry that finds the connection closed.
    interceptors: [
      makeGrpcRetryInterceptor(defaultGrpcRetryOptions()),
      closedChannelGuard,
      // Innermost: below the retry interceptor, so that every attempt sent counts.
      ...(opts.onCall ? [callCounter(opts.onCall)] : []),
    ],
  });
  return new Client({
    connection,
    namespace: opts.namespace,
    dataConverter: createDataConverter(opts.codecKeys),
    ...(opts.tracing ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
  });
}

/** A gRPC interceptor reporting each call's method name (the last segment of `/package.Service/Method`). */
function callCounter(onCall: (method: string) => void): Interceptor {
  return (options, nextCall) => {
    const path = options.method_definition.path;
    onCall(path.slice(path.lastIndexOf('/') + 1));
    return new InterceptingCall(nextCall(options));
  };
}

/** Readiness probe: the frontend answers within a short deadline. */
export async function pingTemporal(client: Client, timeoutMs = 1_500): Promise<boolean> {
  try {
    await client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
