import type { Belief } from '@mem01/engine';
import { tombstoneOf } from '@mem01/engine/store-kit';
import { describe, expect, it } from 'vitest';
import {
  beliefLine,
  decodeEmbedding,
  ExportFormatError,
  type ExportHeader,
  encodeEmbedding,
  headerLine,
  parseBeliefLine,
  parseHeader,
} from './export-format.js';

const header: ExportHeader = {
  format: 'mem01-export',
  version: 1,
  exportedAt: '2026-01-01T00:00:00.000Z',
  scope: { userId: 'u1', namespace: null },
  store: 'sqlite',
  embedding: { dimensions: 3, source: 'store', model: 'm' },
  beliefs: 1,
};

const belief: Belief = {
  id: '0190a000-0000-7000-8000-000000000001',
  scope: { userId: 'u1', namespace: '' },
  kind: 'fact',
  subject: 'user',
  attribute: 'home_city',
  value: 'Seattle',
  statement: 'The user lives in Seattle.',
  confidence: 0.9,
  status: 'active',
  supersedes: null,
  supersededBy: null,
  version: 2,
  validFrom: null,
  validTo: null,
  storedAt: '2026-01-01T10:00:00.000Z',
  updatedAt: '2026-01-02T10:00:00.000Z',
  invalidatedAt: null,
  evidence: [
    {
      sessionId: 's1',
      position: 0,
      role: 'user',
      quote: 'I live in Seattle',
      at: '2026-01-01T10:00:00.000Z',
    },
  ],
  source: 'extracted',
};

function expectLineError(fn: () => unknown, line: number, text: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ExportFormatError);
    expect((err as ExportFormatError).line).toBe(line);
    expect((err as Error).message).toMatch(text);
    return;
  }
  throw new Error('expected an ExportFormatError');
}

describe('export format', () => {
  it('round-trips a header and a belief with its embedding bit-exactly', () => {
    const v = new Float32Array([0.1, -2.5, 1e-8]);
    expect(parseHeader(headerLine(header).trim())).toEqual(header);
    const rec = parseBeliefLine(beliefLine(belief, v).trim(), 2, header);
    expect(rec.belief).toEqual(belief);
    expect([...(rec.embedding as Float32Array)]).toEqual([...v]);
    expect(decodeEmbedding(encodeEmbedding(v) as string)).toEqual(v);
    expect(parseBeliefLine(beliefLine(belief, null).trim(), 2, header).embedding).toBeNull();
  });

  it('round-trips host metadata, origin and access counts (the store checks them on import)', () => {
    const tagged: Belief = {
      ...belief,
      metadata: { crm: { id: 7 }, tags: ['vip'] },
      origin: { label: 'crm', ref: 'T-1' },
      accessCount: 3,
      lastAccessedAt: '2026-01-03T00:00:00.000Z',
    };
    expect(parseBeliefLine(beliefLine(tagged, null).trimEnd(), 2, header).belief).toEqual(tagged);
  });

  it('rejects foreign, unversioned and newer files at line 1', () => {
    expectLineError(() => parseHeader('{"format":"other","version":1}'), 1, /not a mem01 export/);
    expectLineError(
      () => parseHeader(JSON.stringify({ ...header, version: 2 })),
      1,
      /unsupported export version 2/,
    );
    expectLineError(() => parseHeader('not json'), 1, /not valid JSON/);
  });

  it('names the line of a bad envelope or embedding (the belief itself is the engine import’s to check)', () => {
    const line = (b: unknown, embedding: unknown = null) =>
      JSON.stringify({ type: 'belief', belief: b, embedding });
    expectLineError(() => parseBeliefLine('{"type":"belief",', 7, header), 7, /not valid JSON/);
    expectLineError(
      () => parseBeliefLine(JSON.stringify({ type: 'note', belief }), 3, header),
      3,
      /type must be "belief"/,
    );
    expectLineError(() => parseBeliefLine(line('text'), 4, header), 4, /belief must be an object/);
    expectLineError(
      () => parseBeliefLine(JSON.stringify({ type: 'belief', belief, embedding: null, extra: 1 }), 8, header),
      8,
      /unknown field extra/,
    );
    expectLineError(
      () => parseBeliefLine(line(belief, 'AAAAAA=='), 10, header),
      10,
      /1 dimensions, the header says 3/,
    );
    expectLineError(() => parseBeliefLine(line(belief, '%%%'), 11, header), 11, /base64/);
    expectLineError(() => parseBeliefLine(line(belief, 'AAAA'), 12, header), 12, /whole number of Float32/);
  });

  it('accepts a content-free tombstone', () => {
    const tomb = tombstoneOf(belief, '2026-01-03T10:00:00.000Z');
    expect(
      parseBeliefLine(JSON.stringify({ type: 'belief', belief: tomb, embedding: null }), 2, header).belief,
    ).toEqual(tomb);
  });
});
