/**
 * A label whose values come from user input (a model name, a tool name the model made up): the first `max` distinct
 * values are kept, later ones become `other`, so a typo-rich workload cannot grow the series without bound.
 */
export function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return 'other';
    seen.add(value);
    return value;
  };
}
