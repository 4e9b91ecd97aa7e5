/** The one data converter the API's client and the worker share, so what one encrypts the other can read. */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec';
import type { CodecKey } from './keys';

/** With keys: the encryption codec. Without (development only; config.ts refuses it in production): none. */
export function createPayloadCodec(keys: readonly CodecKey[]): PayloadCodec | undefined {
  return keys.length > 0 ? new EncryptionCodec(keys) : undefined;
}

export function createDataConverter(keys: readonly CodecKey[]): DataConverter {
  const codec = createPayloadCodec(keys);
  return codec ? { payloadCodecs: [codec] } : {};
}
