/**
 * What `npm run dev` prints once the stack answers: every URL an operator needs (the worker's health and both of
 * its metrics endpoints included: the worker's ports are picked free, so nowhere else says them), what agent steps
 * run on, and the `export` lines that point the CLI at this stack — on moved ports the CLI would otherwise talk to
 * port 3000 and the default database.
 */
import { modelBannerLines, type ModelSetup } from './local-llm';

export interface BannerFacts {
  apiUrl: string;
  temporalUi: string;
  /** True when this stack started Temporal (the Web UI then already has the codec endpoint). */
  startedTemporal: boolean;
  workerHealthUrl: string;
  /** The Temporal SDK's metrics of the worker; undefined when turned off. */
  workerSdkMetricsUrl: string | undefined;
  models: ModelSetup;
  codecSecretsFile: string;
  /** Set when this stack started the database: the CLI's admin commands (users, keys) need its URI. */
  mongoUri: string | undefined;
  mongoDb: string;
  demo: { key: string; created: boolean; user: string; file: string } | undefined;
  logs: string;
}

export function bannerLines(f: BannerFacts): string[] {
  const lines = [
    '',
    'Stepwise is running.',
    `  Console          ${f.apiUrl}/console/   (sign in with the demo key below)`,
    `  API              ${f.apiUrl}/api/v1`,
    `  API docs         ${f.apiUrl}/docs`,
    `  Health           ${f.apiUrl}/readyz   metrics ${f.apiUrl}/metrics`,
    `  Worker           ${f.workerHealthUrl}/readyz   metrics ${f.workerHealthUrl}/metrics`,
  ];
  if (f.workerSdkMetricsUrl) lines.push(`  Worker SDK       ${f.workerSdkMetricsUrl}   (the Temporal SDK's metrics)`);
  lines.push(`  Temporal Web UI  ${f.temporalUi}`);
  lines.push(...modelBannerLines(f.models));
  lines.push(`  Encryption       payloads encrypted in Temporal; key and codec token kept in ${f.codecSecretsFile}`);
  if (!f.startedTemporal)
    lines.push(`  Codec endpoint   ${f.apiUrl}/codec/<CODEC_ACCESS_TOKEN> (give it to your Web UI)`);
  if (f.demo) {
    lines.push(
      `  Demo API key     ${f.demo.key}   (user "${f.demo.user}"; ${f.demo.created ? 'new, ' : ''}kept in ${f.demo.file})`,
    );
    lines.push(`  Try it           curl -H "Authorization: Bearer ${f.demo.key}" ${f.apiUrl}/api/v1/agents`);
  }
  lines.push(`  Logs             ${f.logs}`);
  lines.push('  CLI              in another shell, point `npm run cli` at this stack:', ...exportLines(f));
  lines.push('Press Ctrl-C to stop.');
  return lines;
}

/** `export` lines for the CLI: the API's URL and the demo key (user commands), the database (admin commands). */
export function exportLines(f: Pick<BannerFacts, 'apiUrl' | 'demo' | 'mongoUri' | 'mongoDb'>): string[] {
  const vars = [`STEPWISE_URL=${f.apiUrl}`];
  if (f.demo) vars.push(`STEPWISE_API_KEY=${f.demo.key}`);
  if (f.mongoUri) vars.push(`MONGODB_URI=${f.mongoUri}`, `MONGODB_DB=${f.mongoDb}`);
  return vars.map((v) => `    export ${v}`);
}
