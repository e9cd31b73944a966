import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { BasicAuthVerifier, parseBasicAuthorization } from '../../src/server/basicAuth.js';

// Cost 4, the lowest bcrypt allows, keeps the suite fast; the code path is the same at any cost.
const PROMETHEUS_HASH = bcrypt.hashSync('right-password', 4);
const GRAFANA_HASH = bcrypt.hashSync('other-password', 4);

/** A verifier over real bcrypt that counts the comparisons it runs, and against which hash. */
function countingVerifier(users: Record<string, string>, now: () => number = Date.now) {
  const compared: string[] = [];
  const verifier = new BasicAuthVerifier(new Map(Object.entries(users)), {
    compare: (password, hash) => {
      compared.push(hash);
      return bcrypt.compare(password, hash);
    },
    now,
  });
  return { verifier, compared };
}

describe('BasicAuthVerifier', () => {
  it('accepts the right password and rejects a wrong one', async () => {
    const { verifier } = countingVerifier({ prometheus: PROMETHEUS_HASH });
    expect(await verifier.verify('prometheus', 'right-password')).toBe(true);
    expect(await verifier.verify('prometheus', 'wrong-password')).toBe(false);
    expect(await verifier.verify('prometheus', '')).toBe(false);
    expect(await verifier.verify('grafana', 'right-password')).toBe(false);
  });

  it('runs bcrypt once per right credentials, and once a minute per repeated wrong password', async () => {
    let now = 1_000_000;
    const { verifier, compared } = countingVerifier({ prometheus: PROMETHEUS_HASH }, () => now);
    for (let scrape = 0; scrape < 5; scrape++) {
      expect(await verifier.check('prometheus', 'right-password')).toBe('valid');
    }
    expect(compared).toHaveLength(1);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await verifier.check('prometheus', 'guess')).toBe('invalid');
      expect(await verifier.check('nobody', 'guess')).toBe('invalid');
    }
    expect(compared).toHaveLength(3);
    expect(await verifier.check('prometheus', 'another guess')).toBe('invalid');
    expect(compared).toHaveLength(4);
    now += 59_999;
    expect(await verifier.check('prometheus', 'guess')).toBe('invalid');
    expect(compared).toHaveLength(4);
    now += 1;
    expect(await verifier.check('prometheus', 'guess')).toBe('invalid');
    expect(compared).toHaveLength(5);
  });

  it('checks an unknown username against the configured hash of the highest cost', async () => {
    const cheap = bcrypt.hashSync('cheap', 4);
    const costly = bcrypt.hashSync('costly', 5);
    for (const users of [
      { a: cheap, b: costly, c: cheap },
      { b: costly, a: cheap },
    ]) {
      const { verifier, compared } = countingVerifier(users);
      expect(await verifier.verify('nobody', 'right-password')).toBe(false);
      expect(compared).toEqual([costly]);
    }
  });

  it('runs two comparisons at once, lines up eight, and answers busy beyond without hashing', async () => {
    const started: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const verifier = new BasicAuthVerifier(new Map([['prometheus', PROMETHEUS_HASH]]), {
      compare: async (password, hash) => {
        started.push(password);
        await held;
        return bcrypt.compare(password, hash);
      },
    });
    const verdicts = Array.from({ length: 12 }, (_, index) =>
      verifier.check('prometheus', `guess ${index}`),
    );
    expect(await verdicts[10]).toBe('busy');
    expect(await verdicts[11]).toBe('busy');
    expect(started).toEqual(['guess 0', 'guess 1']);
    release();
    expect(await Promise.all(verdicts.slice(0, 10))).toEqual(Array(10).fill('invalid'));
    expect(started).toHaveLength(10);
    // Every slot is free again.
    expect(await verifier.check('prometheus', 'right-password')).toBe('valid');
  });

  it('forgets remembered successes when the users change', async () => {
    const { verifier, compared } = countingVerifier({ prometheus: PROMETHEUS_HASH });
    expect(await verifier.verify('prometheus', 'right-password')).toBe(true);
    verifier.setUsers(new Map([['grafana', GRAFANA_HASH]]));
    expect(await verifier.verify('prometheus', 'right-password')).toBe(false);
    expect(await verifier.verify('grafana', 'other-password')).toBe(true);
    expect(compared).toEqual([PROMETHEUS_HASH, GRAFANA_HASH, GRAFANA_HASH]);
  });

  it('is off without users', () => {
    expect(new BasicAuthVerifier(new Map()).enabled).toBe(false);
    expect(new BasicAuthVerifier(new Map([['prometheus', PROMETHEUS_HASH]])).enabled).toBe(true);
  });
});

describe('parseBasicAuthorization', () => {
  const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  it('splits at the first colon, so passwords may contain colons', () => {
    expect(parseBasicAuthorization(`Basic ${encode('user:pa:ss')}`)).toEqual({
      username: 'user',
      password: 'pa:ss',
    });
    expect(parseBasicAuthorization(`basic ${encode('jürgen:')}`)).toEqual({
      username: 'jürgen',
      password: '',
    });
  });

  it('rejects other schemes and malformed values', () => {
    expect(parseBasicAuthorization(undefined)).toBeUndefined();
    expect(parseBasicAuthorization(`Bearer ${encode('user:pass')}`)).toBeUndefined();
    expect(parseBasicAuthorization(`Basic ${encode('no-colon')}`)).toBeUndefined();
    expect(parseBasicAuthorization('Basic not base64!')).toBeUndefined();
  });
});
