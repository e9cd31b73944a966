// An upstream that echoes the token back altered (base64 inside a Basic header it shows, URL-encoded,
// upper-cased, cut to a prefix): none of those forms reaches the log or the landing page. A real
// exporter polls a real simulator whose error bodies carry the echoes.
import { describe, expect, it } from 'vitest';
import { FaultPlan } from '../../src/simulator/faults.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';

const TOKEN = 'tok/Echo+Fault=5e1f~9a7b';
const WEB = 'github.com/acme/web';
const API = 'github.com/acme/api';

/** The echoes, each with a piece of it that must appear nowhere. */
const ECHOES = [
  ['base64 of user:token', Buffer.from(`robot:${TOKEN}`).toString('base64')],
  ['URL-encoded', encodeURIComponent(TOKEN)],
  ['upper-cased', TOKEN.toUpperCase()],
  ['a long prefix', TOKEN.slice(0, 14)],
  ['percent-encoded in part, with mixed-case hex', 'tok%2fEcho%2BFault=5e1f~9a7b'],
  [
    'percent-encoded in full, lower-case hex',
    Array.from(Buffer.from(TOKEN), (byte) => `%${byte.toString(16)}`).join(''),
  ],
] as const;

describe('altered echoes of the token from the API', () => {
  it('appear neither in the log nor on the landing page', async () => {
    const faults = new FaultPlan()
      .inject(
        'getQueue',
        {
          kind: 'status',
          status: 401,
          body: `bad credentials: Authorization: Basic ${ECHOES[0][1]}; token=${ECHOES[1][1]}`,
        },
        { repo: WEB, times: Infinity },
      )
      .inject(
        'getQueue',
        {
          kind: 'status',
          status: 500,
          body: `internal error for key ${ECHOES[2][1]} (${ECHOES[3][1]}...) at /v1?t=${ECHOES[4][1]}&u=${ECHOES[5][1]}`,
        },
        { repo: API, times: Infinity },
      );
    const { simulator } = await startTestSimulator({ seed: 7, token: TOKEN, faults });
    const run = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        token: TOKEN,
        targets: `  - repo: ${WEB}\n    branches: [main]\n  - repo: ${API}\n    branches: [main]`,
        polling: '  mergeQueueIntervalSeconds: 0.3\n  staleAfterSeconds: 60',
        timeoutSeconds: 1,
      }),
      'debug',
    );
    await run.waitUntilReady();
    await run.waitFor(
      () => run.logs().includes('HTTP 401') && run.logs().includes('HTTP 500'),
      'both failures to be logged',
    );
    const landingPage = await run.scrape('/');
    const everything = `${run.logs()}\n${landingPage}`;
    // The failures are there, with the rest of their text.
    expect(run.logs()).toContain('bad credentials: Authorization: Basic ');
    expect(run.logs()).toContain('internal error for key <redacted>');
    expect(landingPage).toContain('HTTP 500');
    for (const [, echo] of ECHOES) {
      // Any 8 characters in a row of an echo would be a leak (the first 8 of the base64 echo
      // encode "robot:", not the token).
      for (let start = 0; start + 8 <= echo.length; start++) {
        const piece = echo.slice(start, start + 8);
        if (echo === ECHOES[0][1] && start < 8) continue;
        expect(everything).not.toContain(piece);
      }
    }
  });
});

describe('an API v2 key refused by the API', () => {
  // Every v2 key begins with the published `trunk_v2_`; the rest is the secret.
  const KEY = 'trunk_v2_Echo5e1f9a7bKEYPART';
  const SECRET_PART = KEY.slice('trunk_v2_'.length);

  it("keeps the hint naming the key's public prefix readable and logs no piece of the secret part", async () => {
    const faults = new FaultPlan().inject(
      'v2/merge-queues/{id}/pull-requests',
      // The whole key, the key cut a few characters after its prefix, and its secret part alone.
      { kind: 'status', status: 401, body: `bad key ${KEY} (${KEY.slice(0, 13)}…) ${SECRET_PART}` },
      { repo: WEB, times: Infinity },
    );
    const { simulator } = await startTestSimulator({
      seed: 7,
      token: 'v1-unused',
      apiKey: KEY,
      faults,
    });
    const run = await startTestExporter(
      configYaml({
        apiUrl: simulator.origin,
        token: null,
        apiKey: KEY,
        targets: `  - repo: ${WEB}\n    branches: [main]`,
        polling: '  mergeQueueIntervalSeconds: 0.3\n  staleAfterSeconds: 60',
        timeoutSeconds: 1,
      }),
      'debug',
    );
    await run.waitFor(() => run.logs().includes('HTTP 401'), 'the refusal to be logged');
    const landingPage = await run.scrape('/');
    const everything = `${run.logs()}\n${landingPage}\n${await run.scrape('/metrics')}`;
    expect(run.logs()).toContain(
      '(an API v2 key starts with trunk_v2_; a v1 token does not work on v2)',
    );
    expect(run.logs()).toContain('bad key <redacted> (<redacted>…) <redacted>');
    // No character of the secret part right after the prefix, and no 4 of its characters in a row.
    expect(everything).not.toContain(KEY.slice(0, 'trunk_v2_'.length + 1));
    for (let start = 0; start + 4 <= SECRET_PART.length; start++) {
      expect(everything).not.toContain(SECRET_PART.slice(start, start + 4));
    }
  });
});
