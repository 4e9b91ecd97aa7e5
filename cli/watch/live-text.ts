/**
 * An agent's text while its model call runs, made safe and small for a terminal: `cleanText` drops control
 * characters, `tailLines` gives the last lines of the growing text that the live table shows under the step's row.
 */

/**
 * The model's text without control characters: it is printed to a terminal, where an escape sequence in an answer
 * could move the cursor or rewrite the screen. Newlines stay; a tab becomes a space.
 */
export function cleanText(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  return text.replace(/\t/g, ' ').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '');
}

/** The last `count` lines of `text` wrapped at `width` columns (at least 1), oldest first. */
export function tailLines(text: string, width: number, count: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  const lines = cleanText(text).split('\n');
  for (let i = lines.length - 1; i >= 0 && out.length < count; i--) {
    const line = lines[i] ?? '';
    // Wrapped from the end: the last piece of the last line is the newest text.
    const pieces: string[] = [];
    for (let at = 0; at < line.length; at += w) pieces.push(line.slice(at, at + w));
    if (pieces.length === 0) pieces.push('');
    out.unshift(...pieces.slice(-(count - out.length)));
  }
  return out;
}
