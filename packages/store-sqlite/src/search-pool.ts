/**
 * Search workers: `node:sqlite` is synchronous, so a search on the store's own connection blocks the event loop for
 * as long as it runs (tens of milliseconds for a vector scan over 100k beliefs). The pool runs searches on worker
 * threads, each with its own read connection to the same file (WAL lets readers run beside the writer), so the
 * lexical and the vector search of one recall run at the same time and the event loop stays free.
 *
 * The workers are generic: they execute the batches of `read-batch.ts` with the same `runSteps` code as the in-thread
 * path, so there is one copy of every query.
 */
import { Worker } from 'node:worker_threads';
import { ClosedError, StoreError } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import { SEARCH_SETUP_SQL } from './lexical-search.js';
import { type ReadBatch, type ReadStep, runSteps, unitCosine } from './read-batch.js';

export interface SearchPoolOptions {
  /** The database file. */
  readonly path: string;
  /** How many workers at most (started on first use). */
  readonly size: number;
  /** The sqlite-vec loadable extension to load in each worker, or null. */
  readonly extensionPath: string | null;
  readonly busyTimeoutMs: number;
}

interface Pending {
  readonly resolve: (rows: Row[][]) => void;
  readonly reject: (err: unknown) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

/** An error from a worker, rebuilt with the SQLite code the store's error mapping reads. */
interface WireError {
  readonly message: string;
  readonly errcode?: number;
}

const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const unitCosine = ${unitCosine.toString()};
const runSteps = ${runSteps.toString()};
let db = null;
let failure = null;
try {
  db = new DatabaseSync(workerData.path, { allowExtension: workerData.extensionPath !== null });
  db.exec('PRAGMA busy_timeout = ' + workerData.busyTimeoutMs);
  db.exec('PRAGMA mmap_size = 1073741824');
  db.exec('PRAGMA cache_size = -32768');
  if (workerData.extensionPath !== null) db.loadExtension(workerData.extensionPath);
  db.exec(workerData.setupSql);
} catch (err) {
  failure = err;
}
const statements = new Map();
const prepare = (sql) => {
  let s = statements.get(sql);
  if (!s) {
    s = db.prepare(sql);
    statements.set(sql, s);
  }
  return s;
};
const wire = (err) => ({
  message: err instanceof Error ? err.message : String(err),
  errcode: typeof (err && err.errcode) === 'number' ? err.errcode : undefined,
});
parentPort.on('message', (message) => {
  if (failure !== null) {
    parentPort.postMessage({ id: message.id, error: wire(failure) });
    return;
  }
  try {
    parentPort.postMessage({ id: message.id, rows: runSteps(db, prepare, unitCosine, message.steps) });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: wire(err) });
  }
});
`;

/** A pool of search workers over one database file. */
export class SearchPool {
  readonly #options: SearchPoolOptions;
  readonly #slots: Slot[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: SearchPoolOptions) {
    this.#options = options;
  }

  /** How many workers are running (they start on first use). */
  get running(): number {
    return this.#slots.length;
  }

  /** Runs a batch on the least busy worker (starting one while fewer than `size` run). */
  readonly exec: ReadBatch = (steps: readonly ReadStep[]) => {
    if (this.#closed) return Promise.reject(new ClosedError(`sqlite store ${this.#options.path}`));
    const slot = this.#pick();
    const id = this.#nextId++;
    return new Promise<Row[][]>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, steps });
    });
  };

  /** Stops every worker; searches still running fail with `ClosedError`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const slots = this.#slots.splice(0);
    for (const slot of slots) this.#fail(slot, new ClosedError(`sqlite store ${this.#options.path}`));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  #pick(): Slot {
    let best: Slot | undefined;
    for (const slot of this.#slots) if (!best || slot.pending.size < best.pending.size) best = slot;
    if (best && (best.pending.size === 0 || this.#slots.length >= this.#options.size)) return best;
    return this.#spawn();
  }

  #spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path: this.#options.path,
        extensionPath: this.#options.extensionPath,
        busyTimeoutMs: this.#options.busyTimeoutMs,
        setupSql: SEARCH_SETUP_SQL,
      },
    });
    // An idle worker must not keep the process alive; one with work in flight does (see `exec`).
    worker.unref();
    const slot: Slot = { worker, pending: new Map() };
    worker.on('message', (message: { id: number; rows?: Row[][]; error?: WireError }) => {
      const pending = slot.pending.get(message.id);
      if (!pending) return;
      slot.pending.delete(message.id);
      if (slot.pending.size === 0) worker.unref();
      if (message.error) {
        const err = new Error(message.error.message) as Error & { errcode?: number };
        if (message.error.errcode !== undefined) err.errcode = message.error.errcode;
        pending.reject(err);
      } else {
        pending.resolve(message.rows ?? []);
      }
    });
    const lost = (reason: string) => {
      const i = this.#slots.indexOf(slot);
      if (i >= 0) this.#slots.splice(i, 1);
      this.#fail(slot, new StoreError(`sqlite store ${this.#options.path}: search worker ${reason}`));
    };
    worker.on('error', (err) => lost(`failed: ${err.message}`));
    worker.on('exit', (code) => lost(`exited with code ${code}`));
    this.#slots.push(slot);
    return slot;
  }

  #fail(slot: Slot, err: Error): void {
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    for (const p of pending) p.reject(err);
  }
}
