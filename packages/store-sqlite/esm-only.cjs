'use strict';
// What `require('@mem01/store-sqlite')` resolves to. @mem01/store-sqlite is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/store-sqlite is ESM-only and cannot be loaded with require(). Use `import { openSqliteStore } from '@mem01/store-sqlite'` in an ES module, or `const { openSqliteStore } = await import('@mem01/store-sqlite')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
