import type { FullStore } from '@mem01/engine';
import type { ProcessIdentity } from '@mem01/engine/store-kit';

/** How the suite gets stores. Each store package implements this in its test file. */
export interface ConformanceHarness {
  /**
   * A fresh, empty store (its own file/schema/database) with this fixed embedding dimension. May be called more
   * than once in one test; `cleanup` must then drop everything those calls created.
   */
  open(options: { dimensions: number }): Promise<FullStore>;
  /**
   * Optional: another independent handle on the SAME database as the last `open` (a second connection or a
   * process-like handle), so that racing writers across handles are tested. Absent for the in-memory store.
   */
  openSecond?(): Promise<FullStore>;
  /**
   * Required for a store with `capabilities.ownerLiveness`, absent otherwise: another handle on the SAME database
   * as the last `open`, whose outbox claims are recorded for the process `owner` (the store's `leaseOwner` option,
   * say), so that the suite can leave claims of an exited process behind.
   */
  openAs?(owner: ProcessIdentity): Promise<FullStore>;
  /** Optional: called after each test, after the suite closed every store it opened, to drop the schema/file. */
  cleanup?(): Promise<void>;
  /**
   * Optional, for a store that can still hold transcripts written before owners were recorded: writes `items` as
   * session `sessionId` of the database of the last `open`, with no recorded owner, the way an older schema version
   * left them (positions from 0). Absent for a store that cannot hold such a session (the memory store).
   */
  writeUnownedSession?(sessionId: string, items: readonly unknown[]): Promise<void>;
}

export interface ConformanceOptions {
  /** Titles of tests (`it`) or areas (`describe`) to skip, e.g. a known limitation documented by the store. */
  readonly skip?: readonly string[] | undefined;
}

/** What each area of the suite gets. */
export interface SuiteContext {
  /** A fresh store (dimension 4 unless given). Closed by the suite after the test. */
  open(dimensions?: number): Promise<FullStore>;
  /** A second handle on the database of the last `open`, or null when the harness has none. */
  second(): Promise<FullStore | null>;
  /** A handle on the database of the last `open` acting for process `owner`, or null when the harness has none. */
  openAs(owner: ProcessIdentity): Promise<FullStore | null>;
  /** The harness's {@link ConformanceHarness.writeUnownedSession}, or null when it has none. */
  readonly writeUnownedSession: ConformanceHarness['writeUnownedSession'] | null;
  /** Registers a test unless its title is in `options.skip`. `t.skip()` marks a test not applicable at run time. */
  test(title: string, fn: (t: TestControl) => Promise<void>): void;
}

/** The embedding dimension most tests use. */
export const DIMS = 4;

/** Run-time control of one test. */
export interface TestControl {
  /** Marks the test as skipped (e.g. a capability the store does not have) and stops it. */
  skip(note?: string): void;
}
