/**
 * Lints in-memory files with the repository's ESLint config and prints, as JSON, the rule ids reported for each.
 * A child process because ESLint loads eslint.config.mjs by dynamic import, which jest's module sandbox refuses.
 * Usage: lint-probes.ts '[{"path":"db/probe.ts","code":"…"}]'
 */
import path from 'node:path';
import { ESLint } from 'eslint';

interface Probe {
  path: string;
  code: string;
}

async function main(): Promise<void> {
  const repoRoot = path.resolve(__dirname, '..', '..');
  const probes = JSON.parse(process.argv[2] ?? '[]') as Probe[];
  const eslint = new ESLint({ cwd: repoRoot });
  const out: string[][] = [];
  for (const probe of probes) {
    const [result] = await eslint.lintText(probe.code, { filePath: path.join(repoRoot, probe.path) });
    out.push((result?.messages ?? []).map((m) => m.ruleId ?? m.message));
  }
  process.stdout.write(JSON.stringify(out));
}

void main();
