import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidInputError } from '@mem01/engine';

export interface Conversation {
  readonly id: string;
  readonly at: string;
  readonly user: string;
  readonly assistant: string;
}

export interface Fixture {
  readonly userId: string;
  readonly conversations: readonly Conversation[];
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repository root (apps/demo/dist or apps/demo/src → ../../..); in an installed package, the project's. */
export const REPO_ROOT = join(HERE, '../../..');
/**
 * The fixture: in the repository, its `fixtures/conversations.json`; in an installed package, the copy the build put
 * beside the compiled code (dist/conversations.json).
 */
export const DEFAULT_FIXTURE = existsSync(join(REPO_ROOT, 'apps/demo/package.json'))
  ? join(REPO_ROOT, 'fixtures/conversations.json')
  : join(HERE, 'conversations.json');

/** Reads and checks the demo fixture: `{ userId, conversations: [{ id, at, user, assistant }] }`. */
export function loadFixture(path = DEFAULT_FIXTURE): Fixture {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new InvalidInputError('fixture', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  const doc = raw as { userId?: unknown; conversations?: unknown };
  if (typeof doc.userId !== 'string' || !Array.isArray(doc.conversations)) {
    throw new InvalidInputError('fixture', `${path} needs a userId and a conversations array`);
  }
  const conversations = doc.conversations.map((c: unknown, i: number): Conversation => {
    const x = c as Record<string, unknown>;
    for (const f of ['id', 'at', 'user', 'assistant']) {
      if (typeof x[f] !== 'string' || (x[f] as string).length === 0) {
        throw new InvalidInputError(`fixture.conversations[${i}].${f}`, 'must be a non-empty string');
      }
    }
    return {
      id: x.id as string,
      at: x.at as string,
      user: x.user as string,
      assistant: x.assistant as string,
    };
  });
  return { userId: doc.userId, conversations };
}
