#!/usr/bin/env node
// The `mem01-demo` command. A committed launcher (not dist/bin.js itself) so that installing the workspace before the
// first build links the bin without a warning; the demo is the built dist/bin.js.
import '../dist/bin.js';
