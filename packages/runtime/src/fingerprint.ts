/**
 * The fingerprint runtimes with identical settings share a runtime by: object identities, paths, a hash of the
 * credentials and the resolved settings. Never contains a secret.
 */
import { createHash } from 'node:crypto';
import { stableJson } from '@mem01/engine/binding-kit';
import type { ProviderSettings, ResolvedSettings } from './env.js';
import type { MemoryRuntimeOptions } from './resolve-runtime.js';

/** The key of a runtime opened with `options` and their resolved `settings`. */
export function runtimeKey(options: MemoryRuntimeOptions, settings: ResolvedSettings): string {
  const { providers, target, strict, blockBytes, engineConfig } = settings;
  const credential = credentialKey(providers);
  const embedder = options.embedder;
  return fingerprint(
    JSON.stringify({
      store: options.store
        ? `object:${objectId(options.store)}`
        : target?.kind === 'postgres'
          ? `postgres:${fingerprint(target.connectionString)}:${target.schema ?? ''}`
          : `sqlite:${target?.path}`,
      transcript: options.transcript ? `object:${objectId(options.transcript)}` : 'store',
      extractor: options.extractor ? `object:${objectId(options.extractor)}` : credential,
      embedder:
        embedder === null
          ? 'none'
          : typeof embedder === 'object'
            ? `object:${objectId(embedder)}`
            : `${embedder ?? 'default'}:${credential}`,
      logger: options.logger ? `object:${objectId(options.logger)}` : 'default',
      resume: options.resume !== false,
      strict,
      blockBytes,
      engine: stableJson(engineConfig),
    }),
  );
}

/** A fingerprint of the credentials (never the key itself), to tell runtimes with different keys apart. */
export function credentialKey(settings: ProviderSettings): string {
  if (!settings.apiKey) return 'local';
  const hash = createHash('sha256')
    .update(`mem01-runtime\u0000${settings.baseURL ?? ''}\u0000${settings.apiKey}`)
    .digest('hex')
    .slice(0, 16);
  return `openai:${hash}:${settings.llmModel ?? ''}:${settings.embeddingModel ?? ''}`;
}

function fingerprint(text: string): string {
  return createHash('sha256').update(`mem01-runtime\u0000${text}`).digest('hex').slice(0, 16);
}

const ids = new WeakMap<object, number>();
let nextId = 1;
function objectId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) {
    id = nextId++;
    ids.set(o, id);
  }
  return id;
}
