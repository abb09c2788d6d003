import type { TestProject } from 'vitest/node';
import { startPgliteServer } from './pglite-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteUrl: string;
  }
}

/** One PGlite (pgvector) server for the whole run, on a random 127.0.0.1 port. */
export default async function setup(project: TestProject) {
  const server = await startPgliteServer();
  project.provide('pgliteUrl', server.url);
  return async () => {
    await server.stop();
  };
}
