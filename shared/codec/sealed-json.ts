/**
 * A JSON value sealed with the payload codec's keys, for secrets kept in MongoDB (an MCP server's credentials). The
 * same AES-256-GCM envelope as Temporal payloads (./encryption-codec.ts): the first key seals, every configured key
 * opens, so rotating PAYLOAD_CODEC_KEYS rotates these too. Stored as base64 strings so any MongoDB reads it back
 * unchanged.
 */
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec';
import type { CodecKey, SealedJson } from '../../domain/codec-keys';

export type { SealedJson };

/** Without keys nothing can be sealed: the caller refuses to store the secret rather than keep it in clear. */
export class NoSealingKeyError extends Error {
  constructor() {
    super('PAYLOAD_CODEC_KEYS is not set: secrets cannot be stored encrypted');
    this.name = 'NoSealingKeyError';
  }
}

function codec(keys: readonly CodecKey[]): EncryptionCodec {
  if (keys.length === 0) throw new NoSealingKeyError();
  return new EncryptionCodec(keys);
}

export async function sealJson(keys: readonly CodecKey[], value: unknown): Promise<SealedJson> {
  const [sealed] = await codec(keys).encode([
    {
      metadata: { [METADATA_ENCODING_KEY]: Buffer.from('json/plain') },
      data: Buffer.from(JSON.stringify(value), 'utf8'),
    },
  ]);
  if (!sealed) throw new Error('the codec returned no payload');
  const metadata: Record<string, string> = {};
  for (const [name, bytes] of Object.entries(sealed.metadata ?? {}))
    metadata[name] = Buffer.from(bytes).toString('base64');
  return { metadata, data: Buffer.from(sealed.data ?? new Uint8Array()).toString('base64') };
}

/** Throws PayloadDecryptionError when no configured key opens it (a key was removed too early, or tampering). */
export async function openJson(keys: readonly CodecKey[], sealed: SealedJson): Promise<unknown> {
  const metadata: Record<string, Uint8Array> = {};
  for (const [name, b64] of Object.entries(sealed.metadata)) metadata[name] = Buffer.from(b64, 'base64');
  const [opened] = await codec(keys).decode([{ metadata, data: Buffer.from(sealed.data, 'base64') }]);
  return JSON.parse(Buffer.from(opened?.data ?? new Uint8Array()).toString('utf8')) as unknown;
}
