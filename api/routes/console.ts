/**
 * The web console at /console: the static files `npm run build:console` writes to console/dist, listed once at start
 * (no path from a request ever reaches the file system), under the API's security headers. Hashed assets are cached
 * for a year; index.html is revalidated every time, so a new build is picked up at the next load. Any other path under
 * /console/ is a page of the single-page app (a deep link such as /console/runs/run_…): index.html. Files are sent
 * gzipped to clients that accept it (compressed once, at start).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Router from '@koa/router';
import type { Context } from 'koa';
import { respondError } from '../http/envelope';

const CONSOLE_DIST = path.resolve(__dirname, '..', '..', 'console', 'dist');

const TYPES: ReadonlyMap<string, string> = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'application/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.ico', 'image/x-icon'],
  ['.woff2', 'font/woff2'],
  ['.json', 'application/json'],
]);

interface Asset {
  body: Buffer;
  /** The body gzipped once at start: the console's script is a third of its size compressed. */
  gzipped: Buffer;
  type: string;
  cache: string;
}

/** Every servable file of the build, by URL path below /console/ (a Map: no prototype keys). */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else {
        const type = TYPES.get(path.extname(entry.name));
        if (!type) continue;
        // Vite names what it emits under assets/ by content hash: the same name is always the same bytes.
        const cache = rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
        const body = fs.readFileSync(path.join(dir, rel));
        assets.set(rel, { body, gzipped: gzipSync(body, { level: 9 }), type, cache });
      }
    }
  };
  if (fs.existsSync(path.join(dir, 'index.html'))) walk('');
  return assets;
}

function send(ctx: Context, asset: Asset): void {
  ctx.type = asset.type;
  ctx.set('Cache-Control', asset.cache);
  ctx.vary('Accept-Encoding');
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzipped;
  } else {
    ctx.body = asset.body;
  }
}

export function consoleRoutes(): Router {
  const router = new Router();
  const assets = loadAssets(CONSOLE_DIST);
  const index = assets.get('index.html');

  // The router is not strict about a trailing slash: only the bare path redirects.
  router.get('/console', (ctx, next) => (ctx.path === '/console' ? ctx.redirect('/console/') : next()));
  router.get('/console/{*path}', (ctx) => {
    if (!index) {
      respondError(ctx, 404, 'the console is not built: run `npm run build:console` (npm run dev does)');
      return;
    }
    const rel = (ctx.params as { path?: string | string[] }).path ?? '';
    const relPath = Array.isArray(rel) ? rel.join('/') : rel;
    const asset = assets.get(relPath);
    if (asset) return send(ctx, asset);
    // A missing file is a 404 (a stale hashed name must not get HTML back); any other path is an app page.
    if (relPath.startsWith('assets/') || path.extname(relPath) !== '') {
      respondError(ctx, 404, 'no such console file');
      return;
    }
    send(ctx, index);
  });
  return router;
}
