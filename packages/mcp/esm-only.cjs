'use strict';
// What `require('@mem01/mcp')` resolves to. @mem01/mcp is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "@mem01/mcp is ESM-only and cannot be loaded with require(). Use `import { createMemoryServer } from '@mem01/mcp'` in an ES module, or `const { createMemoryServer } = await import('@mem01/mcp')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
