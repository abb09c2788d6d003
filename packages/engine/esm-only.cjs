'use strict';
// What `require('@mem01/engine')` resolves to. @mem01/engine is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/engine is ESM-only and cannot be loaded with require(). Use `import { MemoryEngine } from '@mem01/engine'` in an ES module, or `const { MemoryEngine } = await import('@mem01/engine')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
