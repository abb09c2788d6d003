'use strict';
// What `require('@mem01/local')` resolves to. @mem01/local is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/local is ESM-only and cannot be loaded with require(). Use `import { createLocalExtractor } from '@mem01/local'` in an ES module, or `const { createLocalExtractor } = await import('@mem01/local')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
