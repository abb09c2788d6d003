// One extraction worker process for the throughput bench: engine.runWorker with a fake extractor that has a
// small fixed latency, until the shared outbox is empty.
import { MemoryEngine } from '@mem01/engine';
import { openPostgresStore } from '../dist/index.js';

const [url, schema, latencyArg, name] = process.argv.slice(2);
const latencyMs = Number(latencyArg);
const quiet = { info: () => {}, warn: () => {} };
const store = await openPostgresStore({
  connectionString: url,
  schema,
  migrate: false,
  logger: quiet,
  maxConnections: 3,
});
let extracted = 0;
const extractor = {
  name: 'bench-fake',
  async extract(request) {
    await new Promise((r) => setTimeout(r, latencyMs));
    const operations = [];
    for (const turn of request.turns) {
      extracted++;
      const m = /^(\w+)=(.+)$/.exec(turn.text);
      if (!m) continue;
      operations.push({
        op: 'add',
        kind: 'fact',
        subject: 'user',
        attribute: m[1],
        value: m[2],
        statement: `The user's ${m[1]} is ${m[2]}.`,
        confidence: 0.9,
        evidence: [{ turnId: turn.id, quote: turn.text }],
      });
    }
    return { operations };
  },
};
const engine = new MemoryEngine({
  store,
  extractor,
  workerId: name,
  config: { concurrency: 1, leaseMs: 30_000 },
  logger: quiet,
});
const ctrl = new AbortController();
const loop = engine.runWorker({ signal: ctrl.signal, pollMs: 25 });
process.send?.({ ready: true });
const timer = setInterval(async () => {
  const b = await store.backlog({ now: new Date().toISOString() });
  if (b.queued + b.claimed === 0) ctrl.abort();
}, 100);
await loop;
clearInterval(timer);
await engine.close();
await store.close();
process.send?.({ extracted });
