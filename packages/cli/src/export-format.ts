/**
 * The mem01 export format: versioned JSON Lines. Line 1 is a header; every further line is one belief with its
 * full lifecycle and provenance, and its embedding as base64 of little-endian Float32 (or null).
 *
 * ```
 * {"format":"mem01-export","version":1,"exportedAt":"…","scope":{"userId":"u1","namespace":null},…,"beliefs":2}
 * {"type":"belief","belief":{"id":"…","scope":{"userId":"u1","namespace":""},…},"embedding":"AAAgQQ…"}
 * ```
 */
import { type Belief, Mem01Error } from '@mem01/engine';
import { type BeliefInsert, bytesToVector, vectorToBytes } from '@mem01/engine/binding-kit';

export const EXPORT_FORMAT = 'mem01-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT;
  readonly version: typeof EXPORT_VERSION;
  readonly exportedAt: string;
  /** The exported user; `namespace: null` means every namespace of the user. */
  readonly scope: { readonly userId: string; readonly namespace: string | null };
  /** The store the export was read from, e.g. `sqlite`. */
  readonly store: string;
  readonly embedding: {
    /** Length of every embedding in the file, or null when none has one. */
    readonly dimensions: number | null;
    /** `store`: the vectors the store holds; `none`: no embeddings. */
    readonly source: 'store' | 'none';
    readonly model: string | null;
  };
  /** Number of belief lines that follow: a truncated file is detected. */
  readonly beliefs: number;
}

export interface ExportLine {
  readonly type: 'belief';
  readonly belief: Belief;
  readonly embedding: string | null;
}

/** A validation failure at one line of an export file. Code `export_format`. */
export class ExportFormatError extends Mem01Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super('export_format', `line ${line}: ${message}`);
    this.line = line;
  }
}

export function encodeEmbedding(v: Float32Array | null | undefined): string | null {
  return v ? Buffer.from(vectorToBytes(v)).toString('base64') : null;
}

export function decodeEmbedding(text: string): Float32Array {
  return bytesToVector(new Uint8Array(Buffer.from(text, 'base64')));
}

export function headerLine(header: ExportHeader): string {
  return `${JSON.stringify(header)}\n`;
}

export function beliefLine(belief: Belief, embedding: Float32Array | null | undefined): string {
  const line: ExportLine = { type: 'belief', belief, embedding: encodeEmbedding(embedding) };
  return `${JSON.stringify(line)}\n`;
}

type Obj = Record<string, unknown>;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isIso(v: unknown): v is string {
  return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));
}

/** Parses and checks the header (line 1). */
export function parseHeader(text: string, lineNo = 1): ExportHeader {
  const fail = (m: string): never => {
    throw new ExportFormatError(lineNo, m);
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    fail('not valid JSON (expected the mem01-export header)');
  }
  if (!isObj(v)) return fail('the header must be a JSON object');
  if (v.format !== EXPORT_FORMAT) fail(`not a mem01 export (format must be "${EXPORT_FORMAT}")`);
  if (v.version !== EXPORT_VERSION) {
    fail(
      `unsupported export version ${JSON.stringify(v.version)}; this mem01 reads version ${EXPORT_VERSION}`,
    );
  }
  if (!isIso(v.exportedAt)) fail('exportedAt must be an ISO-8601 date');
  const scope = v.scope;
  if (!isObj(scope) || typeof scope.userId !== 'string' || scope.userId === '')
    fail('scope.userId must be a string');
  const s = scope as Obj;
  if (s.namespace !== null && typeof s.namespace !== 'string')
    fail('scope.namespace must be a string or null');
  if (typeof v.store !== 'string') fail('store must be a string');
  const emb = v.embedding;
  if (!isObj(emb)) return fail('embedding must be an object');
  if (emb.dimensions !== null && !(Number.isInteger(emb.dimensions) && (emb.dimensions as number) > 0)) {
    fail('embedding.dimensions must be a positive integer or null');
  }
  if (emb.source !== 'store' && emb.source !== 'none') {
    fail('embedding.source must be "store" or "none"');
  }
  if (emb.model !== null && typeof emb.model !== 'string') fail('embedding.model must be a string or null');
  if (!Number.isInteger(v.beliefs) || (v.beliefs as number) < 0)
    fail('beliefs must be a non-negative integer');
  return v as unknown as ExportHeader;
}

/**
 * Parses one belief line: the envelope (`type`, `belief`, `embedding`) and the embedding's encoding, against the
 * header's dimensions. The belief itself is checked by the engine's import (`validateImportRecords` of the store kit),
 * not here.
 */
export function parseBeliefLine(text: string, lineNo: number, header: ExportHeader): BeliefInsert {
  const fail = (m: string): never => {
    throw new ExportFormatError(lineNo, m);
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    fail(`not valid JSON (${(err as Error).message})`);
  }
  if (!isObj(v)) return fail('must be a JSON object');
  for (const k of Object.keys(v))
    if (!['type', 'belief', 'embedding'].includes(k)) fail(`unknown field ${k}`);
  if (v.type !== 'belief') fail(`type must be "belief", got ${JSON.stringify(v.type)}`);
  if (!isObj(v.belief)) return fail('belief must be an object');
  let embedding: Float32Array | null = null;
  if (v.embedding !== null) {
    if (typeof v.embedding !== 'string' || !BASE64.test(v.embedding)) {
      fail('embedding must be a base64 string or null');
    }
    const bytes = Buffer.from(v.embedding as string, 'base64');
    if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0)
      fail('embedding is not a whole number of Float32 values');
    embedding = decodeEmbedding(v.embedding as string);
    if (header.embedding.dimensions !== null && embedding.length !== header.embedding.dimensions) {
      fail(`embedding has ${embedding.length} dimensions, the header says ${header.embedding.dimensions}`);
    }
  }
  return { belief: v.belief as unknown as Belief, embedding };
}
