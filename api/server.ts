/** API entrypoint: parse config, compose the process (compose.ts), listen; drain and close on SIGTERM/SIGINT. */
import http from 'node:http';
import { loadConfigOrExit } from '../config';
import { createApp } from './app';
import { openApi } from './compose';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const { deps, close } = await openApi(config);
  const { logger } = deps;
  const app = createApp(deps);
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  server.listen(config.API_PORT, config.API_HOST);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') {
      logger.fatal(`port ${config.API_PORT} is already in use; choose another with API_PORT=<port>`);
      process.exit(1);
    }
    throw err;
  });
  logger.info({ url: `http://${config.API_HOST}:${config.API_PORT}` }, 'API listening');

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    server.closeIdleConnections();
    server.close(() => {
      void close().then(() => process.exit(0));
    });
    // In-flight requests get a bounded time to finish.
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
