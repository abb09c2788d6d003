import { createBelief } from '@mem01/engine';
import { LocalEmbedder } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
const path = process.argv[2]; const N = Number(process.argv[3]);
const store = openSqliteStore({ path, dimensions: 384, logger: { info() {}, warn() {} }, synchronous: 'normal' });
const emb = new LocalEmbedder({ dimensions: 384 });
const syl = ['ka','lo','mi','ren','tor','vas','quin','del','sha','bru','nek','pol','zar','fi','gum'];
let seed = 1; const r = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
const pick = (a) => a[Math.floor(r() * a.length)];
const V = Array.from({ length: 3000 }, () => pick(syl) + pick(syl) + pick(syl));
const scope = { userId: 'bench-user' };
for (let have = 0; have < N; have += 5000) {
  const texts = Array.from({ length: 5000 }, (_, k) => `The user likes ${pick(V)} ${pick(V)} with ${pick(V)} item ${have + k}.`);
  const vecs = await emb.embed(texts); const at = new Date().toISOString();
  await store.importBeliefs(texts.map((statement, k) => ({ belief: createBelief({ scope, kind: 'fact', subject: 'user', attribute: `item_${have + k}`, value: 'x', statement, confidence: 0.8, source: 'import', at }), embedding: vecs[k] })));
}
store.checkpoint(); await store.close(); console.log('built', N, JSON.stringify(V.slice(0, 5)));
