/**
 * Test helpers for `@mem01/openai`: an OpenAI-compatible fake HTTP server (responses + embeddings) with scripted
 * faults, and parsers for the extraction and summary prompts' data sections. For tests, smoke runs and benchmarks only.
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
export { isSummaryRequest, type SummaryData, summaryData } from './summary-data.js';
