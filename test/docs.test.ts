/**
 * The README is a manual, not the reference: at most 250 lines. And the documentation holds together: every relative
 * link in README.md and docs/**\/*.md names a file of the repository, and a link to a heading of a Markdown page names
 * a heading that page has.
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/run-node';

const README_MAX_LINES = 250;

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(full);
    return e.name.endsWith('.md') ? [full] : [];
  });
}

/** The heading anchors a renderer makes (GitHub's rule: lower case, punctuation dropped, spaces to hyphens). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Fenced blocks hold examples: no headings, no links. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
}

/** Inline code holds examples too. */
function withoutCode(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** Every relative link of one Markdown file that does not lead where it says, as `file: target (why)`. */
function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = [];
  const here = path.relative(repoRoot, file);
  for (const m of withoutCode(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const link = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: …
    const [target, anchor] = link.split('#') as [string, string | undefined];
    if (target === '') {
      if (anchor && !anchors(markdown).has(anchor)) broken.push(`${here}: ${link} (no such heading)`);
      continue;
    }
    const resolved = path.resolve(path.dirname(file), decodeURIComponent(target));
    if (!fs.existsSync(resolved)) {
      broken.push(`${here}: ${link} (no such file)`);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${here}: ${link} (no such heading)`);
    }
  }
  return broken;
}

describe('documentation', () => {
  const readme = path.join(repoRoot, 'README.md');
  const files = [readme, ...markdownFiles(path.join(repoRoot, 'docs'))];

  it(`README.md is at most ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync(readme, 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('has its pages', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it('links only to files and headings that exist', () => {
    expect(files.flatMap((f) => brokenLinks(f, fs.readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('the link check finds a missing file, a missing heading, and passes good links and code', () => {
    const file = path.join(repoRoot, 'docs', 'check.md');
    const text = [
      '# Check',
      '## A heading, with `code`',
      '[ok](api.md) [ok](#a-heading-with-code) [ok](../README.md#quick-start) [web](https://example.com/x.md)',
      '[missing](nope.md) [bad anchor](api.md#no-such-heading) [bad here](#nowhere)',
      '```sh',
      'echo "[not a link](gone.md)"',
      '```',
    ].join('\n');
    expect(brokenLinks(file, text)).toEqual([
      'docs/check.md: nope.md (no such file)',
      'docs/check.md: api.md#no-such-heading (no such heading)',
      'docs/check.md: #nowhere (no such heading)',
    ]);
  });
});
