/** What a command may touch of the outside world; the bin passes the process's, tests pass captured ones. */
import { createInterface } from 'node:readline';

export interface CliOutput {
  write(chunk: string): boolean;
  once?(event: 'drain', listener: () => void): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** Standard input: only its TTY-ness and a line reader for confirmations. */
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean | undefined };
  readonly env: NodeJS.ProcessEnv;
  /** Called for `mem01 inspect` once the server listens; resolves when the CLI should stop serving. */
  readonly waitForStop?: (() => Promise<void>) | undefined;
}

/** The real process's streams. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** Writes and waits for `drain` when the stream's buffer is full, so large exports stay flat in memory. */
export async function writeOut(out: CliOutput, chunk: string): Promise<void> {
  if (!out.write(chunk) && out.once) {
    await new Promise<void>((resolve) => out.once?.('drain', resolve));
  }
}

/** Asks one question on the terminal and returns the answer line. */
export async function ask(io: CliIo, question: string): Promise<string> {
  const rl = createInterface({
    input: io.stdin,
    output: io.stderr as NodeJS.WritableStream,
    terminal: false,
  });
  try {
    io.stderr.write(question);
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return answer.trim();
  } finally {
    rl.close();
  }
}
