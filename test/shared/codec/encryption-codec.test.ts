/**
 * The payload codec on its own: a round trip hides and restores the payload, keys rotate (old ones still open what
 * they sealed), and everything that cannot be opened fails loudly — unknown key id, altered bytes, a relabelled key
 * id — while payloads written before encryption pass through. Plus the configuration that feeds it.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { ConfigError, loadConfig } from '../../../config';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  METADATA_KEY_ID,
  PayloadDecryptionError,
} from '../../../shared/codec/encryption-codec';
import { formatCodecKeys, parseCodecKeys, type CodecKey } from '../../../domain/codec-keys';
import { generateCodecKey } from '../../../shared/codec/keys';

const key = (id: string): CodecKey => ({ id, key: randomBytes(32) });
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const payload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

describe('EncryptionCodec', () => {
  const marker = `marker-${randomBytes(6).toString('hex')}`;
  const value = { note: marker, n: 42, nested: [null, 'ü'] };

  it('seals a payload (nothing of it readable) and opens it back to the very same payload', async () => {
    const codec = new EncryptionCodec([key('k1')]);
    const original = payload(value);
    const [sealed] = await codec.encode([original]);
    expect(text(sealed!.metadata![METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed!.metadata![METADATA_KEY_ID])).toBe('k1');
    expect(Object.keys(sealed!.metadata!).sort()).toEqual([METADATA_ENCODING_KEY, METADATA_KEY_ID].sort());
    expect(text(sealed!.data)).not.toContain(marker);
    expect(text(sealed!.data)).not.toContain('json/plain'); // the inner encoding is hidden too

    const [opened] = await codec.decode([sealed!]);
    expect(opened).toEqual({
      metadata: Object.fromEntries(Object.entries(original.metadata!).map(([k, v]) => [k, new Uint8Array(v)])),
      data: new Uint8Array(original.data!),
    });
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(value);
  });

  it('uses a fresh nonce each time: the same payload never seals to the same bytes', async () => {
    const codec = new EncryptionCodec([key('k1')]);
    const [a, b] = await codec.encode([payload(value), payload(value)]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
    expect(Buffer.from(a!.data!).subarray(0, 12).equals(Buffer.from(b!.data!).subarray(0, 12))).toBe(false);
  });

  it('round-trips empty and binary payloads', async () => {
    const codec = new EncryptionCodec([key('k1')]);
    const empty: Payload = { metadata: {}, data: new Uint8Array() };
    const binary: Payload = { metadata: { encoding: Buffer.from('binary/plain') }, data: randomBytes(1000) };
    const opened = await codec.decode(await codec.encode([empty, binary]));
    expect(opened[0]).toEqual({ metadata: {}, data: new Uint8Array() });
    expect(Buffer.from(opened[1]!.data!).equals(Buffer.from(binary.data!))).toBe(true);
    expect(text(opened[1]!.metadata!.encoding)).toBe('binary/plain');
  });

  it('rotation: after a new key is put first, payloads sealed with the old one still open, new ones use the new key', async () => {
    const old = key('2025-01');
    const [sealedOld] = await new EncryptionCodec([old]).encode([payload(value)]);
    const rotated = new EncryptionCodec([key('2026-01'), old]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([sealedOld!]))[0]!)).toEqual(value);
    const [sealedNew] = await rotated.encode([payload(value)]);
    expect(text(sealedNew!.metadata![METADATA_KEY_ID])).toBe('2026-01');
  });

  it('a payload sealed with a key that is not configured fails clearly, naming the key id (never the key)', async () => {
    const [sealed] = await new EncryptionCodec([key('gone')]).encode([payload(value)]);
    const other = key('k2');
    const attempt = new EncryptionCodec([other]).decode([sealed!]);
    await expect(attempt).rejects.toBeInstanceOf(PayloadDecryptionError);
    await expect(attempt).rejects.toThrow(/key "gone", which is not in PAYLOAD_CODEC_KEYS \(configured: k2\)/);
    await expect(attempt).rejects.not.toThrow(other.key.toString('base64'));
  });

  it('altered ciphertext, a relabelled key id and a truncated payload are refused, not decrypted to garbage', async () => {
    const k1 = key('k1');
    const k2 = { id: 'k2', key: k1.key }; // same key material, another label: the label is authenticated too
    const codec = new EncryptionCodec([k1, k2]);
    const [sealed] = await codec.encode([payload(value)]);

    const flipped = Buffer.from(sealed!.data!);
    flipped[20] = flipped[20]! ^ 1;
    await expect(codec.decode([{ ...sealed!, data: flipped }])).rejects.toThrow(/failed authentication with key "k1"/);

    const relabelled = { ...sealed!, metadata: { ...sealed!.metadata, [METADATA_KEY_ID]: Buffer.from('k2') } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication with key "k2"/);

    await expect(codec.decode([{ ...sealed!, data: sealed!.data!.subarray(0, 20) }])).rejects.toThrow(/truncated/);
    const noKeyId = { ...sealed!, metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING) } };
    await expect(codec.decode([noKeyId])).rejects.toThrow(/without an encryption-key-id/);
  });

  it('payloads written before encryption (or without metadata) pass through unchanged', async () => {
    const codec = new EncryptionCodec([key('k1')]);
    const plain = payload(value);
    const bare: Payload = { data: Buffer.from('x') };
    const [a, b] = await codec.decode([plain, bare]);
    expect(a).toBe(plain);
    expect(b).toBe(bare);
  });
});

describe('PAYLOAD_CODEC_KEYS and CODEC_ACCESS_TOKEN configuration', () => {
  const k = () => randomBytes(32).toString('base64');

  it('parses keyid:base64 entries in order (the first encrypts) and formats them back', () => {
    const value = `new:${k()}, old:${k()}`;
    const config = loadConfig({ PAYLOAD_CODEC_KEYS: value });
    expect(config.PAYLOAD_CODEC_KEYS.map((c) => c.id)).toEqual(['new', 'old']);
    expect(config.PAYLOAD_CODEC_KEYS.every((c) => c.key.length === 32)).toBe(true);
    expect(formatCodecKeys(config.PAYLOAD_CODEC_KEYS)).toBe(value.replace(' ', ''));
    expect(parseCodecKeys(generateCodecKey()).keys).toHaveLength(1);
  });

  it('refuses malformed keys, listing each problem without echoing key material', () => {
    const short = randomBytes(16).toString('base64');
    const dup = k();
    let error: ConfigError | undefined;
    try {
      loadConfig({ PAYLOAD_CODEC_KEYS: `nocolon,bad id:${k()},short:${short},a:${dup},a:${dup},b:not*base64` });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toEqual([
      expect.stringContaining('entry 1: expected keyid:base64'),
      expect.stringContaining('entry 2: expected keyid:base64'),
      expect.stringContaining('key "short": must be 32 random bytes'),
      expect.stringContaining('key "a" is listed twice'),
      expect.stringContaining('key "b": must be 32 random bytes'),
    ]);
    expect(error!.message).not.toContain(short);
    expect(error!.message).not.toContain(dup);
  });

  it('production refuses to start without a key; development and test run unencrypted', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PAYLOAD_CODEC_KEYS: required in production/);
    expect(() => loadConfig({ NODE_ENV: 'production', PAYLOAD_CODEC_KEYS: `k1:${k()}` })).not.toThrow();
    expect(loadConfig({ NODE_ENV: 'development' }).PAYLOAD_CODEC_KEYS).toEqual([]);
  });

  it('a codec token must be long and URL-safe (it travels in the Web UI codec URL)', () => {
    expect(() => loadConfig({ CODEC_ACCESS_TOKEN: 'short' })).toThrow(/at least 32/);
    expect(() => loadConfig({ CODEC_ACCESS_TOKEN: `${'a'.repeat(32)}/x` })).toThrow(/URL/);
    expect(loadConfig({ CODEC_ACCESS_TOKEN: 'a'.repeat(40) }).CODEC_ACCESS_TOKEN).toBe('a'.repeat(40));
  });
});
