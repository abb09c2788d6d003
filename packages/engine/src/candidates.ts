/** The existing beliefs offered to an extractor with the text it reads, so it can confirm or supersede them. */
import { MAX_QUERY_CHARS } from './config.js';
import type { EngineCore } from './engine-core.js';
import { describeError } from './errors.js';
import type { CandidateBelief } from './ports.js';
import { recallBeliefs } from './recall-service.js';
import { clip } from './text.js';
import { EXTRACTABLE_KINDS, type Scope } from './types.js';
import { pick } from './util.js';

/** What the extractor sees of a candidate belief. */
const CANDIDATE_FIELDS = [
  'id',
  'kind',
  'subject',
  'attribute',
  'value',
  'statement',
  'confidence',
  'storedAt',
] as const satisfies readonly (keyof CandidateBelief)[];

/** The user's existing active beliefs most related to `text`, offered to the extractor. */
export async function extractionCandidates(
  core: EngineCore,
  scope: Scope,
  text: string,
): Promise<CandidateBelief[]> {
  const options = { limit: core.config.candidatesForExtraction, kinds: EXTRACTABLE_KINDS };
  // The head of the batch stands for it (as a long message's head carries its question), within the query limits.
  const query = clip(text.slice(0, MAX_QUERY_CHARS), core.config.maxTextBytes);
  // Candidates are a hint for the extractor: when the embedder fails, lexical candidates keep extraction going
  // (and the commit, which needs embeddings, reports the failure if it persists).
  const hits = await recallBeliefs(core, scope, query, options).catch((err: unknown) => {
    core.logger?.warn(`mem01: vector candidates unavailable, using lexical only: ${describeError(err)}`);
    return recallBeliefs(core, scope, query, { ...options, vector: false });
  });
  return hits.map(({ belief }) => pick(belief, CANDIDATE_FIELDS));
}
