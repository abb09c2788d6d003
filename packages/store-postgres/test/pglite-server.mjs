/**
 * PGlite with pgvector behind a real Postgres wire-protocol socket (pglite-socket, several connections), so the
 * store's pg + kysely code runs unchanged against real pgvector and HNSW. Used by vitest's globalSetup and by
 * the bench.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** Extended-protocol message types that leave the backend mid-statement until the next Sync. */
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C', 'H']);

/**
 * pglite-socket 0.2's queue interleaves single protocol messages of different connections. PGlite has one
 * backend, so connection B's Parse can replace connection A's unnamed statement between A's Parse and Bind
 * ("unnamed prepared statement does not exist"). This queue keeps serving one connection from its first
 * extended-protocol message to its Sync, and for the whole of an open transaction, as the stock queue does.
 */
class SyncAwareQueue {
  #queue = [];
  #processing = false;
  #sticky = null;
  constructor(db) {
    this.db = db;
  }

  enqueue(handlerId, message, onData) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ handlerId, message, onData, resolve, reject });
      if (!this.#processing) void this.#process();
    });
  }

  async #process() {
    if (this.#processing) return;
    this.#processing = true;
    try {
      while (this.#queue.length > 0) {
        let index = 0;
        if (this.#sticky !== null) {
          index = this.#queue.findIndex((p) => p.handlerId === this.#sticky);
          if (index === -1) break;
        }
        const [item] = this.#queue.splice(index, 1);
        if (!item) break;
        try {
          let bytes = 0;
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
          const type = String.fromCharCode(item.message[0] ?? 0);
          this.#sticky = EXTENDED.has(type) || this.db.isInTransaction() ? item.handlerId : null;
          item.resolve(bytes);
        } catch (err) {
          this.#sticky = null;
          item.reject(err);
        }
      }
    } finally {
      this.#processing = false;
    }
  }

  getQueueLength() {
    return this.#queue.length;
  }

  clearQueueForHandler(handlerId) {
    this.#queue = this.#queue.filter((p) => {
      if (p.handlerId !== handlerId) return true;
      p.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  async clearTransactionIfNeeded(handlerId) {
    if (this.#sticky !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.#sticky = null;
    await this.#process();
  }
}

/** @param {{ dataDir?: string, pgvector?: boolean }} options `pgvector: false` serves a PGlite without it. */
export async function startPgliteServer(options = {}) {
  const db = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.pgvector === false ? {} : { extensions: { vector } }),
  });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 32 });
  // Handlers are given the server's queue when a connection arrives, so replacing it before start() is enough.
  server.queryQueue = new SyncAwareQueue(db);
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
