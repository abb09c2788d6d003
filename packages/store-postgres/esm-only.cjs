'use strict';
// What `require('@mem01/store-postgres')` resolves to. @mem01/store-postgres is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/store-postgres is ESM-only and cannot be loaded with require(). Use `import { openPostgresStore } from '@mem01/store-postgres'` in an ES module, or `const { openPostgresStore } = await import('@mem01/store-postgres')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
