/**
 * Polls `cond` every 10 ms until it holds; throws `timed out waiting for <what>` after `timeoutMs`. For what a child
 * process or another connection does, which a test can only observe.
 */
export async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
