/**
 * The generated client types are the served document's: the generator runs in its own process (openapi-typescript
 * is an ES module jest's CommonJS runtime cannot load) and compares with the committed file, so a route or schema
 * change without `npm run generate:client` fails here instead of in a user's compiler.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApiDocument } from '../../api/openapi/document';

const root = path.resolve(__dirname, '../..');
const schemaFile = path.join(root, 'client/schema.d.ts');

async function check(file?: string): Promise<{ code: number; stderr: string }> {
  const args = ['tsx', 'client/generate.ts', '--check', ...(file ? [file] : [])];
  try {
    await promisify(execFile)('npx', args, { cwd: root });
    return { code: 0, stderr: '' };
  } catch (err) {
    const failed = err as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('generated client types', () => {
  it('match the OpenAPI document the API serves (else: run npm run generate:client)', async () => {
    const result = await check();
    if (result.code !== 0) throw new Error(result.stderr);
  });

  it('the check fails, naming the fix, when the file differs from the document', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'stepwise-client-'));
    try {
      const stale = path.join(dir, 'schema.d.ts');
      const committed = await readFile(schemaFile, 'utf8');
      await writeFile(stale, committed.replace("'/api/v1/approvals': {", "'/api/v1/approvals-renamed': {"));
      const result = await check(stale);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('run npm run generate:client');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('cover every documented operation', async () => {
    const committed = await readFile(schemaFile, 'utf8');
    const document = buildOpenApiDocument({ PUBLIC_URL: undefined });
    for (const template of Object.keys(document.paths ?? {})) expect(committed).toContain(`'${template}': {`);
  });
});
