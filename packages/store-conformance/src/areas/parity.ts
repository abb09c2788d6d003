/**
 * Parity: the same fixture gives the same lexical top-k on every store, within a documented tolerance.
 *
 * Each store ranks lexical matches its own way (BM25 over a per-scope inverted index, FTS5's BM25, PostgreSQL's
 * `tsvector` with idf weights from planner statistics), so scores differ and so may the order of equally good
 * matches. For each query of the fixture, the reference groups the matching beliefs into tiers, best first: a tier
 * holds the beliefs that contain the same query words (after stemming), and a belief with more of the query's words
 * is in a better tier. The tolerance: every store's top-k (k = {@link K})
 *
 * - holds only matching beliefs (each contains a query word);
 * - is in tier order: no belief ranks above a belief of a better tier;
 * - holds every belief of the tiers that fit in k whole, the rest from the next tier.
 *
 * So stores agree on which beliefs make the top-k, except which members of the tier cut by k, and on the order
 * except within a tier. The fixture is small (one scope, a few dozen beliefs), which is where PostgreSQL has no
 * planner statistics and weighs every word alike, so its tiers come from how many of the query's words a belief
 * holds, never from word rarity alone. Scores are store-specific and are not compared.
 */
import type { Belief, Scope } from '@mem01/engine';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { belief, insertAll, unique } from '../fixtures.js';

/** How many hits each store's top-k is compared on. */
export const K = 5;

/** The fixture: statement, value and attribute of each belief, by a short key. */
const FIXTURE: Readonly<Record<string, readonly [statement: string, value: string, attribute: string]>> = {
  saffronTea: ['The user likes saffron tea with honey.', 'saffron tea', 'favourite_tea'],
  greenTea: ['The user drinks green tea every morning.', 'green tea', 'morning_drink'],
  blackTea: ['The user takes black tea with milk.', 'black tea', 'tea_style'],
  teaShop: ['The user runs a small tea shop in Leeds.', 'tea shop', 'business'],
  coffee: ['The user drinks dark roast coffee.', 'dark roast coffee', 'coffee'],
  grinder: ['The user owns an old coffee grinder.', 'coffee grinder', 'kitchen_tool'],
  hikingBoots: ['The user bought hiking boots for the Alps.', 'hiking boots', 'gear'],
  hikes: ['The user hikes in the Lake District most weekends.', 'Lake District', 'weekend_activity'],
  runningShoes: ['The user needs new running shoes.', 'running shoes', 'shopping_list'],
  alps: ['The user skied in the Alps last winter.', 'Alps', 'last_trip'],
  dogName: ['The user has a dog called Biscuit.', 'Biscuit', 'dog_name'],
  dogWalk: ['The user walks the dog before work.', 'dog walk', 'routine'],
  cat: ['The user is allergic to cats.', 'cats', 'allergy'],
  sister: ['The user has a sister who lives in Lisbon.', 'Lisbon', 'sister_city'],
  home: ['The user lives in Manchester.', 'Manchester', 'home_city'],
  movedFrom: ['The user moved from Lisbon to Manchester in 2021.', '2021', 'move_year'],
  guitar: ['The user plays the guitar in a folk band.', 'guitar', 'instrument'],
  piano: ['The user is learning the piano.', 'piano', 'learning'],
  band: ['The user saw a jazz band in Lisbon.', 'jazz band', 'concert'],
  vegetarian: ['The user is vegetarian.', 'vegetarian', 'diet'],
  curry: ['The user cooks a vegetable curry on Sundays.', 'vegetable curry', 'sunday_meal'],
  peanuts: ['The user is allergic to peanuts.', 'peanuts', 'food_allergy'],
  python: ['The user writes Python at work.', 'Python', 'work_language'],
  rust: ['The user is learning Rust in the evenings.', 'Rust', 'side_project'],
  deadline: ['The user has a project deadline in March.', 'March', 'deadline'],
  marathon: ['The user is training for a marathon in April.', 'marathon', 'goal'],
  birthday: ['The user has a birthday on 12 May.', '12 May', 'birthday'],
  car: ['The user drives an electric car.', 'electric car', 'car'],
  bike: ['The user cycles to work on a road bike.', 'road bike', 'commute'],
  garden: ['The user grows tomatoes in the garden.', 'tomatoes', 'garden'],
  porridge: ['The user puts honey on porridge.', 'porridge', 'breakfast'],
  oatMilk: ['The user prefers oat milk.', 'oat milk', 'milk_choice'],
  milkRound: ['The user buys milk on Fridays.', 'Fridays', 'errand'],
  football: ['The user supports Manchester City.', 'Manchester City', 'football_club'],
};

/** Queries (content words, as the engine passes them) and the reference tiers of their matches, best first. */
const QUERIES: readonly { readonly query: string; readonly tiers: readonly (readonly string[])[] }[] = [
  { query: 'saffron tea', tiers: [['saffronTea'], ['greenTea', 'blackTea', 'teaShop']] },
  {
    query: 'tea milk honey',
    tiers: [
      ['saffronTea', 'blackTea'],
      ['greenTea', 'teaShop', 'porridge', 'oatMilk', 'milkRound'],
    ],
  },
  { query: 'hiking boots alps', tiers: [['hikingBoots'], ['hikes', 'alps']] },
  { query: 'dog name', tiers: [['dogName'], ['dogWalk']] },
  { query: 'sister lisbon', tiers: [['sister'], ['movedFrom', 'band']] },
  { query: 'lisbon manchester', tiers: [['movedFrom'], ['sister', 'band', 'home', 'football']] },
  { query: 'coffee grinder', tiers: [['grinder'], ['coffee']] },
  { query: 'allergic peanuts', tiers: [['peanuts'], ['cat']] },
  { query: 'learning rust', tiers: [['rust'], ['piano']] },
  { query: 'vegetable curry sundays', tiers: [['curry']] },
  { query: 'jazz band lisbon', tiers: [['band'], ['guitar', 'sister', 'movedFrom']] },
  { query: 'work python', tiers: [['python'], ['dogWalk', 'bike']] },
  { query: 'quantum telescope', tiers: [] },
];

export function parityTests(ctx: SuiteContext): void {
  ctx.test(
    `the fixture's lexical top-${K} matches the reference on every query, within the tolerance`,
    async () => {
      const store = await ctx.open();
      const scope: Scope = { userId: unique('parity-') };
      const byKey = new Map<string, Belief>();
      // Stored oldest first in fixture order, so ids (time-ordered) follow it.
      Object.entries(FIXTURE).forEach(([key, [statement, value, attribute]], i) => {
        byKey.set(
          key,
          belief(scope, {
            statement,
            value,
            attribute,
            at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
          }),
        );
      });
      await insertAll(store, scope, [...byKey.values()]);
      const keyOf = new Map([...byKey].map(([key, b]) => [b.id, key]));
      for (const { query, tiers } of QUERIES) {
        const hits = await store.searchLexical(scope, query, { limit: K });
        const got = hits.map((h) => keyOf.get(h.belief.id) ?? h.belief.id);
        const label = `${store.name}: "${query}" ranked ${JSON.stringify(got)}, tiers ${JSON.stringify(tiers)}`;
        const tierOf = (key: string) => tiers.findIndex((tier) => tier.includes(key));
        const ranks = got.map(tierOf);
        expect(
          ranks.every((r) => r >= 0),
          `${label}: a hit is not a match`,
        ).toBe(true);
        expect(
          [...ranks].sort((a, b) => a - b),
          `${label}: out of tier order`,
        ).toEqual(ranks);
        // The tiers that fit whole, then as many of the next as fill k.
        let room = K;
        for (const [i, tier] of tiers.entries()) {
          const taken = got.filter((key) => tierOf(key) === i);
          expect(taken.length, `${label}: tier ${i}`).toBe(Math.min(room, tier.length));
          room -= taken.length;
        }
      }
    },
  );
}
