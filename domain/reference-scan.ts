/**
 * Finds `{{ … }}` references in a string in one left-to-right pass: linear in the length of the string whatever it
 * holds. A backtracking regular expression (the first version used `\{\{\s*([^{}]*?)\s*\}\}`) took time cubic in a
 * string like `"{{"` followed by thousands of spaces, and a workflow write or a run could freeze the process with one
 * such string. The rule is the same as that expression's: a reference is `{{`, then text without `{` or `}`, then `}}`;
 * the text is trimmed of white space.
 */

export interface ReferenceMatch {
  /** Offset of the opening `{{`. */
  start: number;
  /** Offset just past the closing `}}`. */
  end: number;
  /** The text between the braces, trimmed. */
  expr: string;
}

/** Every reference of `text`, in order (non-overlapping, leftmost first). */
export function scanReferences(text: string): ReferenceMatch[] {
  const found: ReferenceMatch[] = [];
  let i = text.indexOf('{{');
  while (i !== -1) {
    // The first brace after the opening pair decides: `}}` closes this reference; anything else means no reference
    // starts at i, and none can start before that brace either (the characters in between are not braces).
    let j = i + 2;
    while (j < text.length && text[j] !== '{' && text[j] !== '}') j++;
    if (j >= text.length) break;
    if (text[j] === '}' && text[j + 1] === '}') {
      found.push({ start: i, end: j + 2, expr: text.slice(i + 2, j).trim() });
      i = text.indexOf('{{', j + 2);
    } else if (text[j] === '{') {
      // `{{{…`: a reference may start one character later; otherwise at the brace found.
      i = text.indexOf('{{', j === i + 2 ? i + 1 : j);
    } else {
      i = text.indexOf('{{', j + 1);
    }
  }
  return found;
}

/** The single reference `text` consists of (nothing before or after it), or undefined. */
export function wholeReference(text: string): ReferenceMatch | undefined {
  if (!text.startsWith('{{') || !text.endsWith('}}')) return undefined;
  const [first, second] = scanReferences(text);
  return first && second === undefined && first.start === 0 && first.end === text.length ? first : undefined;
}
