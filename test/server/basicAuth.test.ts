import { get as httpGet } from 'node:http';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BasicAuthVerifier, parseBasicAuthorization } from '../../src/server/basicAuth.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { until } from '../faults/harness.js';

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

/** A verifier whose comparisons (but of `passes`) wait until `release` is called, in the order they started. */
function heldVerifier(passes?: string) {
  const started: string[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const verifier = new BasicAuthVerifier(new Map([['prometheus', PROMETHEUS_HASH]]), {
    compare: async (password, hash) => {
      started.push(password);
      if (password !== passes) await held;
      return bcrypt.compare(password, hash);
    },
  });
  return {
    verifier,
    started,
    release: () => {
      release();
    },
  };
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
    // The first comparison times the costliest hash, once for this set of users.
    expect(compared).toHaveLength(1);
    for (let scrape = 0; scrape < 5; scrape++) {
      expect(await verifier.check('prometheus', 'right-password')).toBe('valid');
    }
    expect(compared).toHaveLength(2);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await verifier.check('prometheus', 'guess')).toBe('invalid');
      expect(await verifier.check('nobody', 'guess')).toBe('invalid');
    }
    // The unknown username is never hashed.
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

  it('runs one comparison at a time, lines up four per address, and answers busy beyond without hashing', async () => {
    const { verifier, started, release } = heldVerifier();
    const verdicts = Array.from({ length: 7 }, (_, index) =>
      verifier.check('prometheus', `guess ${index}`, '10.0.0.1'),
    );
    expect(await verdicts[5]).toBe('busy');
    expect(await verdicts[6]).toBe('busy');
    // The comparison timing the costliest hash runs outside the bcrypt queue.
    expect(started).toEqual(['', 'guess 0']);
    release();
    expect(await Promise.all(verdicts.slice(0, 5))).toEqual(Array(5).fill('invalid'));
    expect(started).toHaveLength(6);
    // The bcrypt queue is empty again.
    expect(await verifier.check('prometheus', 'right-password')).toBe('valid');
  });

  it('answers remembered right credentials at once while every turn is taken', async () => {
    const { verifier, started, release } = heldVerifier('right-password');
    expect(await verifier.check('prometheus', 'right-password', '10.0.0.9')).toBe('valid');
    const flood = Array.from({ length: 5 }, (_, index) =>
      verifier.check('prometheus', `guess ${index}`, '10.0.0.1'),
    );
    expect(await verifier.check('prometheus', 'guess 5', '10.0.0.1')).toBe('busy');
    expect(await verifier.check('prometheus', 'right-password', '10.0.0.9')).toBe('valid');
    expect(started).toEqual(['', 'right-password', 'guess 0']);
    release();
    await Promise.all(flood);
  });

  it('keeps the event loop turning while bcrypt compares', async () => {
    // Cost 11 takes bcryptjs long enough that its own async compare would hold the loop in
    // slices of 100 ms, a few timers between them at most.
    const hash = bcrypt.hashSync('right-password', 11);
    const verifier = new BasicAuthVerifier(new Map([['prometheus', hash]]));
    let checked = false;
    let timers = 0;
    const tick = (): void => {
      timers++;
      if (!checked) setTimeout(tick, 0);
    };
    const verdict = verifier.check('prometheus', 'right-password').finally(() => (checked = true));
    setTimeout(tick, 0);
    expect(await verdict).toBe('valid');
    expect(timers).toBeGreaterThanOrEqual(20);
  });

  it('forgets remembered successes when the users change', async () => {
    const { verifier, compared } = countingVerifier({ prometheus: PROMETHEUS_HASH });
    expect(await verifier.verify('prometheus', 'right-password')).toBe(true);
    verifier.setUsers(new Map([['grafana', GRAFANA_HASH]]));
    expect(await verifier.verify('prometheus', 'right-password')).toBe(false);
    expect(await verifier.verify('grafana', 'other-password')).toBe(true);
    // Each set of users has its costliest hash timed once.
    expect(compared).toEqual([PROMETHEUS_HASH, PROMETHEUS_HASH, GRAFANA_HASH, GRAFANA_HASH]);
  });

  it('is off without users', () => {
    expect(new BasicAuthVerifier(new Map()).enabled).toBe(false);
    expect(new BasicAuthVerifier(new Map([['prometheus', PROMETHEUS_HASH]])).enabled).toBe(true);
  });
});

describe('the time a refusal takes', () => {
  const CHEAP = bcrypt.hashSync('cheap-password', 4);
  const COSTLY = bcrypt.hashSync('costly-password', 5);

  afterEach(() => {
    vi.useRealTimers();
  });

  /** A verifier on fake timers whose comparison against COSTLY takes 300 ms (or `slow.costlyMs`), any other 5 ms. */
  function timedVerifier(users: Record<string, string>, slow = { costlyMs: 300 }) {
    const compared: string[] = [];
    const verifier = new BasicAuthVerifier(new Map(Object.entries(users)), {
      compare: (password, hash) => {
        compared.push(hash);
        return new Promise((resolve) => {
          const ms = hash === COSTLY ? slow.costlyMs : 5;
          setTimeout(() => {
            resolve(bcrypt.compareSync(password, hash));
          }, ms);
        });
      },
    });
    return { verifier, compared };
  }

  it('is the costliest comparison whatever the username, and an unknown one is never hashed', async () => {
    vi.useFakeTimers();
    const { verifier, compared } = timedVerifier({ cheap: CHEAP, costly: COSTLY });
    await vi.advanceTimersByTimeAsync(300);
    // Timed once, for this set of users.
    expect(compared).toEqual([COSTLY]);

    /** Milliseconds until `check` answers, on the fake clock. */
    const answerTime = async (username: string, password: string) => {
      const startedAt = Date.now();
      let answeredAt: number | undefined;
      void verifier.check(username, password).then(() => (answeredAt = Date.now()));
      while (answeredAt === undefined) await vi.advanceTimersByTimeAsync(1);
      return answeredAt - startedAt;
    };
    expect(await answerTime('cheap', 'wrong')).toBe(300);
    expect(await answerTime('costly', 'wrong')).toBe(300);
    expect(await answerTime('nobody', 'wrong')).toBe(300);
    // A right password is answered as soon as it is checked.
    expect(await answerTime('cheap', 'cheap-password')).toBe(5);
    expect(compared).toEqual([COSTLY, CHEAP, COSTLY, CHEAP]);
  });

  it('holds the next turn as long for an unknown username as for a known one', async () => {
    vi.useFakeTimers();
    const { verifier, compared } = timedVerifier({ cheap: CHEAP, costly: COSTLY });
    await vi.advanceTimersByTimeAsync(300);
    for (const username of ['nobody', 'costly']) {
      compared.length = 0;
      void verifier.check(username, `wrong for ${username}`, '10.0.0.1');
      void verifier.check('cheap', `wrong after ${username}`, '10.0.0.2');
      await vi.advanceTimersByTimeAsync(299);
      // The second address's comparison has not started: the first one's turn is not over.
      expect(compared).toEqual(username === 'costly' ? [COSTLY] : []);
      await vi.advanceTimersByTimeAsync(1);
      expect(compared.at(-1)).toBe(CHEAP);
      await vi.advanceTimersByTimeAsync(300);
    }
  });

  it('follows the time the last comparison against the costliest hash took', async () => {
    vi.useFakeTimers();
    const slow = { costlyMs: 300 };
    const { verifier } = timedVerifier({ cheap: CHEAP, costly: COSTLY }, slow);
    await vi.advanceTimersByTimeAsync(300);
    // The machine gets busier: the costly user's next comparison takes 500 ms.
    slow.costlyMs = 500;
    let costly: string | undefined;
    void verifier.check('costly', 'wrong').then((verdict) => (costly = verdict));
    await vi.advanceTimersByTimeAsync(500);
    expect(costly).toBe('invalid');
    let cheap: string | undefined;
    void verifier.check('cheap', 'wrong').then((verdict) => (cheap = verdict));
    await vi.advanceTimersByTimeAsync(499);
    expect(cheap).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(cheap).toBe('invalid');
  });

  it('waits for the timing of new users after a reload', async () => {
    vi.useFakeTimers();
    const { verifier, compared } = timedVerifier({ cheap: CHEAP });
    await vi.advanceTimersByTimeAsync(5);
    verifier.setUsers(
      new Map([
        ['cheap', CHEAP],
        ['costly', COSTLY],
      ]),
    );
    let verdict: string | undefined;
    void verifier.check('nobody', 'wrong').then((answer) => (verdict = answer));
    await vi.advanceTimersByTimeAsync(299);
    expect(verdict).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(verdict).toBe('invalid');
    expect(compared).toEqual([CHEAP, COSTLY]);
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

describe('basic auth over HTTP, per client address', () => {
  let running: RunningHttpServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** The status of a GET of `url` sent from the loopback address `from`. */
  function ask(url: string, from: string, password: string): Promise<number> {
    const credentials = Buffer.from(`prometheus:${password}`).toString('base64');
    return new Promise((resolve, reject) => {
      const request = httpGet(
        url,
        { localAddress: from, agent: false, headers: { authorization: `Basic ${credentials}` } },
        (response) => {
          response.resume();
          response.on('end', () => {
            resolve(response.statusCode ?? 0);
          });
        },
      );
      request.on('error', reject);
    });
  }

  it("checks a second address's credentials before the first address's next ones", async () => {
    const started: string[] = [];
    const endings: (() => void)[] = [];
    const arrived: string[] = [];
    /** Notes each check once it has its place in line (check places it before it first waits). */
    class WatchedVerifier extends BasicAuthVerifier {
      override check(username: string, password: string, address?: string) {
        const verdict = super.check(username, password, address);
        arrived.push(password);
        return verdict;
      }
    }
    const auth = new WatchedVerifier(new Map([['prometheus', PROMETHEUS_HASH]]), {
      compare: (password, hash) => {
        started.push(password);
        return new Promise((resolve) =>
          endings.push(() => {
            resolve(bcrypt.compareSync(password, hash));
          }),
        );
      },
    });
    endings.shift()?.();
    const store = new SnapshotStore(600);
    running = await startHttpServer(createTestHttpApp({ store, auth }).app, '127.0.0.1', 0);
    const url = `${running.url}/healthz`;
    // 127.0.2.1 takes the running turn and every place its address has in line.
    const flood = ['a0', 'a1', 'a2', 'a3', 'a4'].map((guess) => ask(url, '127.0.2.1', guess));
    await until(() => arrived.length === 5, 'five checks from 127.0.2.1 lined up');
    expect(await ask(url, '127.0.2.1', 'a5')).toBe(429);
    const scraper = ask(url, '127.0.2.2', 'right-password');
    await until(() => arrived.length === 7, 'the check from 127.0.2.2 lined up');
    while (started.length < 7) {
      endings.shift()?.();
      await until(() => endings.length > 0 || started.length === 7, 'the next comparison');
    }
    endings.shift()?.();
    expect(await scraper).toBe(200);
    expect(await Promise.all(flood)).toEqual(Array(5).fill(401));
    // The one timing the hash, the flood's first, then the scraper's, then the flood's others.
    expect(started.map((password) => password.replace(/^a\d$/, 'a'))).toEqual([
      '',
      'a',
      'right-password',
      'a',
      'a',
      'a',
      'a',
    ]);
  });
});
