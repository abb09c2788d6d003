/**
 * Helpers over Agents SDK input items, typed structurally so the package does not depend on SDK internals.
 */
import type { TurnRole } from '@mem01/engine';

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The text of a textual user or assistant message, or null for anything else (system and developer messages,
 * tool calls and results, reasoning, images, files, refusals). Mixed content keeps only its text parts.
 */
export function turnOf(item: unknown): { role: TurnRole; text: string } | null {
  if (!isRecord(item)) return null;
  if (item.type !== undefined && item.type !== 'message') return null;
  const role = item.role;
  if (role !== 'user' && role !== 'assistant') return null;
  const content = item.content;
  let text: string;
  if (typeof content === 'string') {
    text = content;
  } else if (Array.isArray(content)) {
    const wanted = role === 'user' ? 'input_text' : 'output_text';
    text = content
      .filter((part): part is Rec => isRecord(part) && part.type === wanted && typeof part.text === 'string')
      .map((part) => part.text as string)
      .join('\n');
  } else {
    return null;
  }
  return text.trim() === '' ? null : { role, text };
}

/** The text of the newest user message among `items`, or null. */
export function latestUserText(items: readonly unknown[], skip?: (item: unknown) => boolean): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (skip?.(item)) continue;
    const turn = turnOf(item);
    if (turn?.role === 'user') return turn.text;
  }
  return null;
}

/**
 * Where the last `size` textual user messages of `items` begin (the index of the first of them; what follows it is in
 * the window too): 0 for `'all'` and when `items` holds no more than `size` of them, `items.length` for 0.
 */
export function lastTurnsStart(items: readonly unknown[], size: number | 'all'): number {
  if (size === 'all') return 0;
  if (size <= 0) return items.length;
  let seen = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    if (turnOf(items[i])?.role === 'user' && ++seen === size) return i;
  }
  return 0;
}

/** Index of the newest user message (any content), or -1. */
export function latestUserIndex(items: readonly unknown[], skip?: (item: unknown) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (skip?.(item)) continue;
    if (isRecord(item) && item.role === 'user' && (item.type === undefined || item.type === 'message'))
      return i;
  }
  return -1;
}

/** The synthetic memory message for a rendered block. */
export function memoryItem(blockText: string): { role: 'user'; content: string } {
  return { role: 'user', content: blockText };
}

/**
 * Remembers the block texts this runtime injected, so the synthetic item can be recognised by exact
 * equality when the SDK hands it back for persistence. Bounded: the oldest texts are forgotten first.
 */
export class InjectedBlocks {
  private readonly texts = new Map<string, number>();
  constructor(private readonly max = 4096) {}

  add(text: string): void {
    this.texts.delete(text);
    this.texts.set(text, Date.now());
    while (this.texts.size > this.max) {
      const oldest = this.texts.keys().next().value;
      if (oldest === undefined) break;
      this.texts.delete(oldest);
    }
  }

  /**
   * True for exactly the item this runtime injected: `{ role: 'user', content: <block> }`, optionally with the
   * `type: 'message'` the SDK may add when it normalises input. Any other field makes it a different item.
   */
  isInjected(item: unknown): boolean {
    if (!isRecord(item)) return false;
    if (item.role !== 'user' || typeof item.content !== 'string') return false;
    if (!this.texts.has(item.content)) return false;
    const keys = Object.keys(item).filter((k) => item[k] !== undefined);
    return keys.every((k) => k === 'role' || k === 'content' || (k === 'type' && item.type === 'message'));
  }

  get size(): number {
    return this.texts.size;
  }
}

const blocksByRuntime = new WeakMap<object, InjectedBlocks>();

/**
 * The block texts injected through `runtime`: one set per runtime, so a session recognises the item another session
 * of the same runtime injected when the SDK hands it back.
 */
export function injectedBlocks(runtime: object): InjectedBlocks {
  let blocks = blocksByRuntime.get(runtime);
  if (!blocks) {
    blocks = new InjectedBlocks();
    blocksByRuntime.set(runtime, blocks);
  }
  return blocks;
}
