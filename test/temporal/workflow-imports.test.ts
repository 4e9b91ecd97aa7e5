/**
 * Temporal's reusable sandbox runs the bundle's module code again for every execution: whatever the workflow code
 * imports as a value is evaluated per run, and stays in memory while the run is cached. zod is the large one, and the
 * workflow needs it only for delay and approval configs (temporal/workflows/builtin-steps.ts requires it on first use).
 * This walks the value imports from the bundle's entry and fails when one of the modules reached imports zod.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

/** The specifiers a module imports or re-exports as values (`import type`, all-`type` named imports left out). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const specs: string[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) specs.push(node.moduleSpecifier.text);
    }
    if (
      ts.isExportDeclaration(node) &&
      !node.isTypeOnly &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      specs.push(node.moduleSpecifier.text);
  }
  return specs;
}

function resolveLocal(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
}

/** Every module reached from `entry` by value imports, with the packages each imports. */
function reach(entry: string): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    const specs = valueImports(file);
    reached.set(
      file,
      specs.filter((s) => !s.startsWith('.')),
    );
    for (const spec of specs.filter((s) => s.startsWith('.'))) {
      const local = resolveLocal(file, spec);
      if (local) visit(local);
    }
  };
  visit(entry);
  return reached;
}

describe('the workflow bundle', () => {
  const reached = reach(path.join(ROOT, 'temporal/workflows/index.ts'));

  it('reaches the workflow code and the domain modules it uses', () => {
    const names = [...reached.keys()].map((f) => path.relative(ROOT, f));
    expect(names).toContain('temporal/workflows/run.ts');
    expect(names).toContain('domain/run.ts');
  });

  it('evaluates no zod in a run without delay or approval steps', () => {
    const withZod = [...reached]
      .filter(([, packages]) => packages.some((p) => p === 'zod' || p.startsWith('zod/')))
      .map(([file]) => path.relative(ROOT, file));
    expect(withZod).toEqual([]);
  });
});
