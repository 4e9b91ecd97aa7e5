/**
 * Some OpenAI-compatible servers answer with empty or repeated tool-call ids. The AI SDK matches a call's arguments
 * by id, so two calls sharing one id come back with the first call's arguments (seen with two `""` ids). This fetch
 * wrapper gives every tool call of a chat-completions response a unique, non-empty id before the SDK parses it.
 */
type ChatChoice = { index?: number; message?: { tool_calls?: { id?: unknown }[] } };

export function withUniqueToolCallIds(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return res;
    const text = await res.text();
    let changed = false;
    let body: { choices?: ChatChoice[] } | undefined;
    try {
      body = JSON.parse(text) as { choices?: ChatChoice[] };
    } catch {
      body = undefined; // not ours to judge: the SDK reports the unparseable body
    }
    for (const [c, choice] of (body?.choices ?? []).entries()) {
      const seen = new Set<string>();
      for (const [i, call] of (choice.message?.tool_calls ?? []).entries()) {
        if (typeof call.id !== 'string' || call.id === '' || seen.has(call.id)) {
          call.id = `call_${c}_${i}`;
          changed = true;
        }
        seen.add(call.id as string);
      }
    }
    // The body was read (and decoded) already: the new response must not claim the old length or encoding.
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(changed ? JSON.stringify(body) : text, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  };
}
