/**
 * The OpenAPI document (GET /api/v1/openapi.json) and an offline API docs page at /docs: Swagger UI served from the
 * swagger-ui-dist package in node_modules, no CDN. The init script is a file, not inline, so a strict CSP can apply.
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { oas31 } from 'zod-openapi';

/**
 * The only files the page needs; anything else under /docs/ is a 404. A Map, not an object literal: a lookup of
 * `__proto__` or `constructor` in an object finds Object.prototype's members (and answered with a dropped connection).
 */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Stepwise API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  persistAuthorization: false,
});
`;

export function docsRoutes(document: oas31.OpenAPIObject): Router {
  const router = new Router();
  const json = JSON.stringify(document);
  // The package ships no types; its directory is all we need.
  const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/:asset', (ctx, next) => {
    const name = ctx.params.asset ?? '';
    const type = ASSETS.get(name);
    if (!type) return next();
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    // The name is one of the fixed keys above, so no path from the request reaches the file system.
    ctx.body = createReadStream(path.join(assetsDir, name));
    return undefined;
  });
  return router;
}
