/** The machine's PostgreSQL server. Whether it has pgvector is detected in global-setup.ts, never assumed. */
export const REAL_URL = process.env.MEM01_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';
