/**
 * `npm run generate:client`: rewrites client/schema.d.ts from the current OpenAPI document.
 * `tsx client/generate.ts --check [file]`: exits 1 when the file (client/schema.d.ts by default) is out of date.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SCHEMA_FILE, generateSchemaSource } from './generate-schema';

async function main(argv: string[]): Promise<number> {
  const root = path.resolve(__dirname, '..');
  const fresh = await generateSchemaSource(root);
  if (argv[0] === '--check') {
    const file = path.resolve(argv[1] ?? path.join(root, SCHEMA_FILE));
    const committed = await readFile(file, 'utf8').catch(() => '');
    if (committed === fresh) return 0;
    console.error(`${path.relative(root, file)} is out of date with the OpenAPI document: run npm run generate:client`);
    return 1;
  }
  await writeFile(path.join(root, SCHEMA_FILE), fresh);
  console.log(`wrote ${SCHEMA_FILE}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
