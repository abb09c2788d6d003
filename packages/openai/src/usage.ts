import type { Usage } from '@mem01/engine/provider-kit';

/** One call's usage, reported through `onUsage`. Content-free. */
export interface UsageEvent {
  readonly kind: 'extraction' | 'summary' | 'embedding';
  /** The user the call was made for; null for embeddings made without a scope. */
  readonly userId: string | null;
  readonly model: string;
  readonly usage: Usage;
  /** HTTP attempts made (1 without retries). */
  readonly attempts: number;
  /** Embeddings served from the cache in this call. */
  readonly cacheHits?: number;
}

/** Receives usage after every call that reached the provider. Exceptions thrown by it are ignored. */
export type UsageListener = (event: UsageEvent) => void;

export function emitUsage(listener: UsageListener | undefined, event: UsageEvent): void {
  if (!listener) return;
  try {
    listener(event);
  } catch {
    // A metrics callback must never break extraction.
  }
}
