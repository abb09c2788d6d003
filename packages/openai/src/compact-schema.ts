/**
 * Shrinks a JSON schema before it is sent: drops `$schema` and moves repeated sub-schemas (found under the given
 * property names) into `$defs`, referenced by `$ref`. Structured Outputs supports `$defs`; the schema is part of
 * every request's input tokens, so repeats cost on every call.
 */
import { stableJson } from '@mem01/engine/provider-kit';

type Json = unknown;

export function compactSchema(
  schema: Record<string, Json>,
  defs: Readonly<Record<string, readonly string[]>>,
): Record<string, Json> {
  const { $schema: _drop, ...root } = schema;
  const found = new Map<string, { name: string; schema: Json; count: number }>();
  // First pass: the first sub-schema seen under each listed property name becomes the definition.
  const visit = (node: Json): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const props = (node as { properties?: Record<string, Json> }).properties;
    if (props) {
      for (const [name, names] of Object.entries(defs)) {
        for (const prop of names) {
          const sub = props[prop];
          if (sub === undefined) continue;
          const key = stableJson(sub);
          const hit = found.get(key);
          if (hit) hit.count++;
          else if (![...found.values()].some((f) => f.name === name))
            found.set(key, { name, schema: sub, count: 1 });
        }
      }
    }
    for (const v of Object.values(node as Record<string, Json>)) visit(v);
  };
  visit(root);
  const used = [...found.entries()].filter(([, f]) => f.count > 1);
  if (used.length === 0) return root;
  const byKey = new Map(used.map(([k, f]) => [k, f.name]));
  const replace = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(replace);
    if (node === null || typeof node !== 'object') return node;
    const name = byKey.get(stableJson(node));
    if (name) return { $ref: `#/$defs/${name}` };
    return Object.fromEntries(Object.entries(node as Record<string, Json>).map(([k, v]) => [k, replace(v)]));
  };
  const out = replace(root) as Record<string, Json>;
  out.$defs = Object.fromEntries(used.map(([, f]) => [f.name, f.schema]));
  return out;
}

/** Inlines `#/$defs/...` references again (for tests and debugging). */
export function inlineRefs(schema: Record<string, Json>): Record<string, Json> {
  const defs = (schema.$defs ?? {}) as Record<string, Json>;
  const walk = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/'))
      return walk(defs[ref.slice('#/$defs/'.length)]);
    return Object.fromEntries(
      Object.entries(node as Record<string, Json>)
        .filter(([k]) => k !== '$defs')
        .map(([k, v]) => [k, walk(v)]),
    );
  };
  return walk(schema) as Record<string, Json>;
}
