/**
 * The PayloadCodec that keeps tenants' data out of Temporal in clear: every payload (workflow input and result,
 * activity arguments and results, memo, query/update/signal values, failure details) is sealed with AES-256-GCM before
 * it leaves the process and opened when it comes back. Codecs run outside the workflow sandbox (in the client and in
 * the worker's main thread), so node:crypto is fine here.
 *
 * Wire form (as in Temporal's encryption sample): metadata `encoding: binary/encrypted` and `encryption-key-id`,
 * data = 12-byte random nonce ‖ ciphertext ‖ 16-byte tag. The plaintext is the whole original payload (its metadata
 * too, so even the inner encoding is hidden). The key id is bound as additional data: relabelling a payload with
 * another key id makes it fail, not decrypt to garbage.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import type { CodecKey } from '../../domain/codec-keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT_VERSION = 1;

/** A payload that cannot be opened: unknown key, tampered bytes, malformed envelope. Retrying never helps. */
export class PayloadDecryptionError extends ValueError {}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly active: CodecKey;

  /** `keys[0]` encrypts; all of them decrypt. */
  constructor(keys: readonly CodecKey[]) {
    const [active] = keys;
    if (!active) throw new ValueError('EncryptionCodec needs at least one key');
    this.active = active;
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads.map((p) => this.seal(p)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads.map((p) => this.open(p)));
  }

  private seal(payload: Payload): Payload {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.active.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(this.active.id));
    const sealed = Buffer.concat([nonce, cipher.update(serialize(payload)), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [METADATA_KEY_ID]: utf8(this.active.id) },
      data: sealed,
    };
  }

  private open(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    // Payloads written before encryption was turned on (or by a client without it) pass through: old runs still read.
    if (!encoding || Buffer.from(encoding).toString('utf8') !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[METADATA_KEY_ID];
    if (!idBytes) throw new PayloadDecryptionError('encrypted payload without an encryption-key-id');
    const keyId = Buffer.from(idBytes).toString('utf8');
    const key = this.byId.get(keyId);
    if (!key) {
      throw new PayloadDecryptionError(
        `payload was encrypted with key "${keyId}", which is not in PAYLOAD_CODEC_KEYS (configured: ${[...this.byId.keys()].join(', ')})`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadDecryptionError('encrypted payload is truncated');
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(keyId));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `payload failed authentication with key "${keyId}" (altered, or a different key)`,
      );
    }
    return deserialize(plain);
  }
}

function additionalData(keyId: string): Buffer {
  return utf8(`stepwise-payload-v${FORMAT_VERSION}:${keyId}`);
}

/** version (1 byte) ‖ entry count (u16) ‖ per entry: name length (u16), name, value length (u32), value ‖ data. */
function serialize(payload: Payload): Buffer {
  const entries = Object.entries(payload.metadata ?? {});
  const parts: Buffer[] = [Buffer.from([FORMAT_VERSION]), u16(entries.length)];
  for (const [name, value] of entries) {
    const n = utf8(name);
    parts.push(u16(n.length), n, u32(value.length), Buffer.from(value));
  }
  parts.push(Buffer.from(payload.data ?? new Uint8Array()));
  return Buffer.concat(parts);
}

function deserialize(buf: Buffer): Payload {
  const fail = () => new PayloadDecryptionError('decrypted payload is malformed');
  if (buf.length < 3 || buf[0] !== FORMAT_VERSION) throw fail();
  let at = 1;
  const take = (n: number): Buffer => {
    if (at + n > buf.length) throw fail();
    const out = buf.subarray(at, at + n);
    at += n;
    return out;
  };
  const count = take(2).readUInt16BE(0);
  const metadata: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const name = take(take(2).readUInt16BE(0)).toString('utf8');
    metadata[name] = new Uint8Array(take(take(4).readUInt32BE(0)));
  }
  return { metadata, data: new Uint8Array(buf.subarray(at)) };
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
