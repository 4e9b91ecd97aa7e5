/**
 * Payloads as Temporal's remote codec protocol carries them: protobuf JSON, so `metadata` values and `data` are
 * base64 strings. Shared by the API's codec endpoint and its tests.
 */
import type { Payload } from '@temporalio/common';

export interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export function payloadFromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
    ),
    data: new Uint8Array(Buffer.from(data ?? '', 'base64')),
  };
}

export function payloadToJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(data ?? new Uint8Array()).toString('base64'),
  };
}
