'use strict';
// What `require('@mem01/store-memory')` resolves to. @mem01/store-memory is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/store-memory is ESM-only and cannot be loaded with require(). Use `import { createMemoryStore } from '@mem01/store-memory'` in an ES module, or `const { createMemoryStore } = await import('@mem01/store-memory')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
