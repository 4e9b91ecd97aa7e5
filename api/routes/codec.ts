/**
 * Temporal's remote codec protocol, for the Web UI and the temporal CLI: POST …/decode and …/encode with
 * `{"payloads":[{metadata, data}]}` (protobuf JSON), answered in the same shape (not the API envelope: the UI reads
 * the protocol's). Mounted at /codec/<token>/{decode,encode} and /codec/{decode,encode} (Bearer token) only when
 * CODEC_ACCESS_TOKEN is set; otherwise those paths are 404 like any unknown route.
 *
 * The router parses its own body, after the token check (an unauthenticated caller never gets a body parsed), with a
 * limit sized for Temporal's payloads rather than the API's: the UI sends a whole snapshot (up to 200 KiB of JSON,
 * then encrypted and base64-encoded) in one request.
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config';
import { PayloadDecryptionError } from '../../shared/codec/encryption-codec';
import { createPayloadCodec } from '../../shared/codec/data-converter';
import { payloadFromJson, payloadToJson } from '../../shared/codec/payload-json';
import { jsonParser, requireJsonType } from '../middleware/body';
import { requireCodecToken } from '../middleware/codec-auth';
import { validate } from '../middleware/validate';
import { UnprocessableError } from '../http/errors';
import { codecBody, codecOperation } from '../schemas/codec';

/** Temporal refuses payloads over 2 MiB by default; base64 and the protocol's JSON add about a third. */
export const CODEC_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** What the Web UI sends: JSON, the namespace, and (with its "pass access token" option) an Authorization header. */
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';

type RoutedContext = Context & { params: Record<string, string | undefined> };

export function codecRoutes(config: Config): Router | undefined {
  const token = config.CODEC_ACCESS_TOKEN;
  if (!token) return undefined;
  const codec = createPayloadCodec(config.PAYLOAD_CODEC_KEYS);
  const uiOrigin = new URL(config.TEMPORAL_UI_URL).origin;
  const router = new Router({ prefix: '/codec' });

  /** The browser-side gate: only the configured Web UI's pages may read the answers. */
  const cors: Middleware = async (ctx, next) => {
    ctx.vary('Origin');
    if (ctx.get('Origin') === uiOrigin) {
      ctx.set('Access-Control-Allow-Origin', uiOrigin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
    }
    await next();
  };
  const preflight = (ctx: RoutedContext) => {
    if (!codecOperation.safeParse(ctx.params.op).success) return;
    if (ctx.get('Origin') === uiOrigin) {
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
    }
    ctx.status = 204;
  };
  const parse = jsonParser(CODEC_BODY_LIMIT_BYTES);
  const body = validate({ body: codecBody });
  const auth = requireCodecToken(token);

  const handle = async (ctx: RoutedContext, next: () => Promise<unknown>) => {
    const op = codecOperation.safeParse(ctx.params.op);
    if (!op.success) return next();
    const payloads = body.input(ctx).body.payloads.map(payloadFromJson);
    try {
      const out = !codec
        ? payloads
        : op.data === 'decode'
          ? await codec.decode(payloads)
          : await codec.encode(payloads);
      ctx.status = 200;
      ctx.body = { payloads: out.map(payloadToJson) };
    } catch (err) {
      if (err instanceof PayloadDecryptionError) throw new UnprocessableError(err.message, 'codec_failed');
      throw err;
    }
  };

  for (const path of ['/:token/:op', '/:op']) {
    router.options(path, cors, preflight);
    router.post(path, cors, auth, requireJsonType, parse, body, handle);
  }
  return router;
}
