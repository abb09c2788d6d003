export interface PgliteServer {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * PGlite with pgvector (or, with `pgvector: false`, without it) behind pglite-socket on a random 127.0.0.1
 * port, several connections.
 */
export function startPgliteServer(options?: { dataDir?: string; pgvector?: boolean }): Promise<PgliteServer>;
