/**
 * Where `chat` writes: the conversation on stdout (`agent> ` and the text as it comes, a line per tool call), notes
 * on stderr. On a terminal the prefixes and tool lines are coloured; otherwise nothing but plain text and newlines is
 * written, so a script reads clean lines. Every write starts on a fresh line unless it continues the agent's text.
 */
import type { CliOutput } from '../context';

export interface ChatScreen {
  /** The agent's text as it comes: `agent> ` before the first piece. */
  agentText(text: string): void;
  /** Ends the agent's text line, if one is open. */
  endText(): void;
  /** A tool call or an approval, indented. */
  tool(text: string): void;
  /** A line of the conversation as it is (`you> …`, a question). */
  line(text: string): void;
  /** A note for the person (stderr). */
  note(text: string): void;
}

const paint = (code: string, text: string) => `\x1b[${code}m${text}\x1b[0m`;

export function chatScreen(io: CliOutput): ChatScreen {
  const colour = io.terminal !== undefined;
  let pending = '';
  // Without a raw writer (output collected by lines) the text is passed on a line at a time.
  const write =
    io.write?.bind(io) ??
    ((text: string) => {
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) io.out(l);
    });
  let open = false;
  const endText = () => {
    if (!open) return;
    write('\n');
    open = false;
  };
  return {
    agentText(text) {
      if (!text) return;
      if (!open) write(colour ? paint('1;36', 'agent> ') : 'agent> ');
      open = true;
      write(text);
    },
    endText,
    tool(text) {
      endText();
      write(`${colour ? paint('2', `  · ${text}`) : `  · ${text}`}\n`);
    },
    line(text) {
      endText();
      write(`${text}\n`);
    },
    note(text) {
      endText();
      io.err(colour ? paint('33', text) : text);
    },
  };
}
