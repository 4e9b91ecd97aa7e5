/** Left-aligned plain-text columns for terminal listings. */
import type { CliOutput } from './context';
export function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** A listing on `io`: JSON lines with `json`, else a table, or the `empty` note on stderr when there is nothing. */
export function printList<T>(
  io: CliOutput,
  items: readonly T[],
  list: { json?: boolean | undefined; empty: string; header: string[]; row: (item: T) => string[] },
): void {
  if (list.json) for (const item of items) io.out(JSON.stringify(item));
  else if (items.length === 0) io.err(list.empty);
  else for (const line of formatTable(list.header, items.map(list.row))) io.out(line);
}
