/**
 * fast-check cases of the credential forms of `@mem01/engine/testing`, for the secrets tests of every package (the
 * conformance suite, the session binding, the CLI and the MCP server): a credential embedded in the words of an
 * error message, or the same credential in an error and its cause.
 */

import fc from 'fast-check';

/** A credential form of `@mem01/engine/testing` (its `CredentialForm`), as these cases read it. */
export interface CredentialForm {
  readonly parts: readonly RegExp[];
  readonly contexts: readonly ((parts: readonly string[]) => string)[];
}

/** Generated secrets with too few distinct characters ("aaaa…") could match unrelated text; real ones never do. */
const distinct = (s: string) => new Set(s).size;

/** The parts of a form, generated from their shapes. */
export function partsOf(form: CredentialForm): fc.Arbitrary<string[]> {
  return fc.tuple(
    ...form.parts.map((shape) =>
      fc.stringMatching(shape).filter((s) => distinct(s) >= Math.min(8, Math.floor(s.length / 2))),
    ),
  );
}

/** Words around the secret, as an error message has them. */
const words = fc.array(
  fc.constantFrom(
    'request',
    'failed:',
    'upstream',
    'refused',
    'the',
    'call',
    '(status 401)',
    'while',
    'extracting',
  ),
  { maxLength: 6 },
);
const glue = fc.constantFrom(' ', '\n', ': ', ' (', ' "', '\t');

export function embedded(form: CredentialForm) {
  return fc
    .record({
      parts: partsOf(form),
      context: fc.nat({ max: form.contexts.length - 1 }),
      before: words,
      after: words,
      glue,
    })
    .map(({ parts, context, before, after, glue }) => ({
      parts,
      text: `${before.join(' ')}${glue}${(form.contexts[context] as (p: readonly string[]) => string)(parts)}${glue}${after.join(' ')}`,
    }));
}

/** The same credential in two places of one failure: the error's message and its cause's, in two contexts. */
export function failureCase(form: CredentialForm) {
  return partsOf(form).chain((parts) =>
    fc
      .tuple(fc.nat({ max: form.contexts.length - 1 }), fc.nat({ max: form.contexts.length - 1 }))
      .map(([a, b]) => {
        const render = (i: number) => (form.contexts[i] as (p: readonly string[]) => string)(parts);
        return { parts, message: `upstream failed: ${render(a)}`, cause: `request was ${render(b)}` };
      }),
  );
}

/** An error carrying the case: `message`, and a `cause` with the second rendering (as drivers nest them). */
export function failureOf(c: { message: string; cause: string }): Error {
  return new Error(c.message, { cause: new Error(c.cause) });
}
