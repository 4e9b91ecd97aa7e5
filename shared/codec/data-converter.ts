/** The one data converter the API's client and the worker share, so what one encrypts the other can read. */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec';
import type { CodecKey } from '../../domain/codec-keys';

/**
 * domain/failure-converter.ts, by path: the SDK loads failure converters so, into the workflow bundle
 * (temporal/bundle.ts) and in the worker's and the client's process.
 */
export const FAILURE_CONVERTER_PATH = require.resolve('../../domain/failure-converter');

/** With keys: the encryption codec. Without (development only; config.ts refuses it in production): none. */
export function createPayloadCodec(keys: readonly CodecKey[]): PayloadCodec | undefined {
  return keys.length > 0 ? new EncryptionCodec(keys) : undefined;
}

/**
 * Failures are always converted with encoded common attributes (the bundle does so whatever the keys), so that what
 * the codec encrypts includes error messages and stack traces.
 */
export function createDataConverter(keys: readonly CodecKey[]): DataConverter {
  const codec = createPayloadCodec(keys);
  return { failureConverterPath: FAILURE_CONVERTER_PATH, ...(codec ? { payloadCodecs: [codec] } : {}) };
}
