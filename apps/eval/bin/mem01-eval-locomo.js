#!/usr/bin/env node
// The `mem01-eval-locomo` command. A committed launcher (not dist/bin.js itself) so that installing the workspace
// before the first build links the bin without a warning; the eval is the built dist/bin.js.
import '../dist/bin.js';
