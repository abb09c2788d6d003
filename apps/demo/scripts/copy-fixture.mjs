// The demo's fixture ships inside the package (dist/conversations.json): `npx mem01-demo` runs where the
// repository's fixtures/ folder is not. One copy, made at build from the repository's file.
import { copyFileSync } from 'node:fs';

copyFileSync(
  new URL('../../../fixtures/conversations.json', import.meta.url),
  new URL('../dist/conversations.json', import.meta.url),
);
