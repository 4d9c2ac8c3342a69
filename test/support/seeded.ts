/** Seeded randomness for tests whose timing is jittered, so a failing run can be replayed. */

/** The variable that fixes a test's seed; unset, each run draws its own. */
export const SEED_ENV = "ALBEDO_TEST_SEED";

/** A 32-bit seed, and a PRNG (mulberry32) over it returning numbers in [0, 1). */
export interface Seeded {
  readonly seed: number;
  next(): number;
  /** Runs `body`; a failure's message gains the line that replays this seed. */
  replayable<T>(file: string, body: () => Promise<T>): Promise<T>;
}

/** The seed from ALBEDO_TEST_SEED (throws when it is not a whole number), else a random one. */
export function seeded(env: NodeJS.ProcessEnv = process.env): Seeded {
  const given = env[SEED_ENV];
  if (given !== undefined && !/^\d+$/.test(given)) throw new Error(`${SEED_ENV} must be a whole number, not ${JSON.stringify(given)}`);
  const seed = given === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(given) >>> 0;
  let state = seed;
  return {
    seed,
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    },
    async replayable(file, body) {
      try {
        return await body();
      } catch (error) {
        if (error instanceof Error) error.message += `\nreplay: ${SEED_ENV}=${seed} npx vitest run ${file}`;
        throw error;
      }
    },
  };
}
