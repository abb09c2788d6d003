'use strict';
// What `require('@mem01/cli')` resolves to. @mem01/cli is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/cli is ESM-only and cannot be loaded with require(). Use `import { run } from '@mem01/cli'` in an ES module, or `const { run } = await import('@mem01/cli')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
