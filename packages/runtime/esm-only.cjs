'use strict';
// What `require('@mem01/runtime')` resolves to. @mem01/runtime is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/runtime is ESM-only and cannot be loaded with require(). Use `import { openMemoryRuntime } from '@mem01/runtime'` in an ES module, or `const { openMemoryRuntime } = await import('@mem01/runtime')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
