'use strict';
// What `require('mem01-demo')` resolves to. mem01-demo is an ES module package (ESM-only): without this file,
// require() would fail with ERR_PACKAGE_PATH_NOT_EXPORTED, which does not say what to do instead.
const error = new Error(
  "mem01-demo is ESM-only and cannot be loaded with require(). Run it with `npx mem01-demo`, or use `const { runStory } = await import('mem01-demo')` in CommonJS.",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
