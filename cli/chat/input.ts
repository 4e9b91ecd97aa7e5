/**
 * The lines `chat` reads: what the person types at a terminal (a prompt, line editing, Ctrl-C and Ctrl-D), or the
 * lines of a pipe or file when stdin is not a terminal (a scripted chat). Lines typed or piped while a turn runs wait
 * for the next read, in order. Ctrl-C is told apart by when it comes: at a read it ends the chat (the read answers
 * null, like the end of input); otherwise it goes to the interrupt handler (the chat cancels the running turn).
 */
import { createInterface, type Interface } from 'node:readline';

export interface ChatInputSource {
  stream: NodeJS.ReadableStream;
  /** stdin is a terminal: the person types (prompts are shown). */
  isTTY: boolean;
}

export interface ChatInput {
  /** The next line; null at the end of input (Ctrl-D, the pipe's end) or on Ctrl-C at the prompt. */
  read(prompt: string): Promise<string | null>;
  /** Called on Ctrl-C while no read waits (null: none). */
  onInterrupt(handler: (() => void) | null): void;
  /** Whether a person types (prompts and questions make sense). */
  readonly interactive: boolean;
  close(): void;
}

/**
 * Reads `source`. `terminalOut`: stdout when it is a terminal as well — then readline edits the line and shows the
 * prompt; otherwise nothing is written to stdout by the input (plain lines), and Ctrl-C arrives as the process's
 * SIGINT.
 */
export function chatInput(source: ChatInputSource, terminalOut: NodeJS.WritableStream | undefined): ChatInput {
  const terminal = source.isTTY && terminalOut !== undefined;
  const rl: Interface = createInterface({
    input: source.stream,
    ...(terminal ? { output: terminalOut, terminal: true } : { terminal: false }),
  });
  const lines: string[] = [];
  let ended = false;
  let waiting: ((line: string | null) => void) | null = null;
  let interrupt: (() => void) | null = null;

  const deliver = (line: string | null) => {
    const w = waiting;
    waiting = null;
    w?.(line);
  };
  rl.on('line', (line) => {
    if (waiting) deliver(line);
    else lines.push(line);
  });
  rl.on('close', () => {
    ended = true;
    deliver(null);
  });
  const sigint = () => {
    if (waiting) {
      // Ctrl-C at the prompt: the chat ends.
      if (terminal) terminalOut.write('\n');
      ended = true;
      deliver(null);
    } else interrupt?.();
  };
  // At a terminal readline has the keyboard in raw mode and reports Ctrl-C itself; elsewhere it is a signal.
  if (terminal) rl.on('SIGINT', sigint);
  else process.on('SIGINT', sigint);

  return {
    interactive: source.isTTY,
    read(prompt) {
      const queued = lines.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => {
        waiting = resolve;
        if (terminal) {
          rl.setPrompt(prompt);
          rl.prompt();
        }
      });
    },
    onInterrupt(handler) {
      interrupt = handler;
    },
    close() {
      if (!terminal) process.removeListener('SIGINT', sigint);
      rl.close();
    },
  };
}
