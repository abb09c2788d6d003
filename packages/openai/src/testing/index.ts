/**
 * Test helpers for `@mem01/openai`: an OpenAI-compatible fake HTTP server (responses + embeddings) with scripted
 * faults, and a parser for the extraction prompt's data section. For tests, smoke runs and benchmarks only.
 */

export { type ExtractionData, extractionData } from './extraction-data.js';
export { extractorResponder, quoteReference } from './extractor-responder.js';
export {
  type FakeEndpoint,
  type FakeOpenAI,
  type FakeOpenAIOptions,
  type FakeRequest,
  type FakeResponsesHandler,
  type FakeStep,
  fakeEmbedding,
  startFakeOpenAI,
} from './fake-openai.js';
export { quotingResponder } from './quoting-responder.js';
