'use strict';
// What `require('@mem01/openai')` resolves to. @mem01/openai is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/openai is ESM-only and cannot be loaded with require(). Use `import { createOpenAIExtractor } from '@mem01/openai'` in an ES module, or `const { createOpenAIExtractor } = await import('@mem01/openai')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
