import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { BasicAuthVerifier, parseBasicAuthorization } from '../../src/server/basicAuth.js';

// Cost 4, the lowest bcrypt allows, keeps the suite fast; the code path is the same at any cost.
const PROMETHEUS_HASH = bcrypt.hashSync('right-password', 4);
const GRAFANA_HASH = bcrypt.hashSync('other-password', 4);

/** A verifier over real bcrypt that counts the comparisons it runs, and against which hash. */
function countingVerifier(users: Record<string, string>) {
  const compared: string[] = [];
  const verifier = new BasicAuthVerifier(new Map(Object.entries(users)), (password, hash) => {
    compared.push(hash);
    return bcrypt.compare(password, hash);
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

  it('runs bcrypt once per right credentials, and on every failed attempt', async () => {
    const { verifier, compared } = countingVerifier({ prometheus: PROMETHEUS_HASH });
    for (let scrape = 0; scrape < 5; scrape++) {
      expect(await verifier.verify('prometheus', 'right-password')).toBe(true);
    }
    expect(compared).toHaveLength(1);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await verifier.verify('prometheus', 'guess')).toBe(false);
    }
    expect(compared).toHaveLength(4);
  });

  it('spends a bcrypt comparison on an unknown username too, against a configured hash', async () => {
    const { verifier, compared } = countingVerifier({ prometheus: PROMETHEUS_HASH });
    expect(await verifier.verify('nobody', 'right-password')).toBe(false);
    expect(compared).toEqual([PROMETHEUS_HASH]);
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
