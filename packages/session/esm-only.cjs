'use strict';
// What `require('mem01session')` resolves to. mem01session is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "mem01session is ESM-only and cannot be loaded with require(). Use `import { memSession } from 'mem01session'` in an ES module, or `const { memSession } = await import('mem01session')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
