// Which API reads each part of a target, for every combination of credentials: the rules the docs
// state ("With a key set, merge queues are read through API v2 only … Quarantine lists too, unless
// a token and `orgUrlSlug` are also set: then v1 stays the source of the configured
// `flakyTests: true` repositories' quarantine lists (discovered ones are read through v2), and
// their flaky and broken tests come from the v2 walk all the same (only v2 lists them)", in
// docs/operations.md), written out case by case.
import { describe, expect, it } from 'vitest';
import { targetApis, type CredentialsSet } from '../../src/config/targetApis.js';

const KEY: CredentialsSet = { apiKey: true, token: false, orgUrlSlug: false };
const TOKEN: CredentialsSet = { apiKey: false, token: true, orgUrlSlug: true };
const KEY_AND_TOKEN: CredentialsSet = { apiKey: true, token: true, orgUrlSlug: true };
const KEY_AND_TOKEN_NO_SLUG: CredentialsSet = { apiKey: true, token: true, orgUrlSlug: false };

describe('targetApis', () => {
  it.each([
    ['a key', 'v2', KEY],
    ['a token', 'v1', TOKEN],
    ['a key and a token with orgUrlSlug', 'v2', KEY_AND_TOKEN],
  ] as const)('reads a merge queue with %s through %s', (_name, api, credentials) => {
    expect(targetApis(credentials, { kind: 'merge_queue' })).toEqual({
      kind: 'merge_queue',
      queue: api,
    });
  });

  it.each([
    ['a key', 'v2', 'v2', KEY, false],
    ['a token', 'v1', undefined, TOKEN, false],
    ['a key and a token with orgUrlSlug, configured', 'v1', 'v2', KEY_AND_TOKEN, false],
    ['a key and a token with orgUrlSlug, discovered', 'v2', 'v2', KEY_AND_TOKEN, true],
    ['a key and a token without orgUrlSlug', 'v2', 'v2', KEY_AND_TOKEN_NO_SLUG, false],
  ] as const)(
    'reads a quarantine list with %s: its quarantined tests through %s, its flaky and broken ones through %s',
    (_name, quarantine, unhealthy, credentials, discovered) => {
      expect(targetApis(credentials, { kind: 'flaky_tests', discovered })).toEqual({
        kind: 'flaky_tests',
        quarantine,
        unhealthy,
      });
    },
  );
});
