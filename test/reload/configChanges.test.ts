// What a reload reports as changed, checked against the configuration schema itself: every key a
// user can write in the file, changed alone, must be reported under its own name. A key the
// reload cannot see fails here the day it is added to the schema.
import { copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load.js';
import { configFileSchema } from '../../src/config/schema.js';
import { SETTING_PATHS } from '../../src/config/settingPaths.js';
import type { ExporterConfig } from '../../src/config/types.js';
import { diffConfigs, summarizeChanges } from '../../src/reload/configChanges.js';
import { schemaKeys } from '../deploy/zodKeys.js';

const TLS_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'tls');
const LISTENING = { address: '0.0.0.0', port: 9740, tls: true };
const BCRYPT_HASH = `$2y$10$${'a'.repeat(53)}`;
const WEBHOOK_SECRET = 'whsec_C2FtcGxlLXdlYmhvb2stc2VjcmV0LTA0Mg==';
const OTHER_WEBHOOK_SECRET = 'whsec_b3RoZXItd2ViaG9vay1zZWNyZXQtOTk5OQ==';

type FileObject = Record<string, unknown>;

/** Files the configurations point at: a token file and the TLS pair, each also under a second name. */
async function settingFiles() {
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-changes-'));
  const path = (name: string) => join(directory, name);
  await writeFile(path('token'), 'token-from-file\n');
  await writeFile(path('token-copy'), 'token-from-file\n');
  await writeFile(path('api-key'), 'trunk_v2_from_file\n');
  await writeFile(path('api-key-copy'), 'trunk_v2_from_file\n');
  await writeFile(path('webhook-secret'), `${WEBHOOK_SECRET}\n`);
  await writeFile(path('webhook-secret-copy'), `${WEBHOOK_SECRET}\n`);
  for (const name of ['server.crt', 'server.key']) {
    await copyFile(join(TLS_FIXTURES, name), path(name));
    await copyFile(join(TLS_FIXTURES, name), path(`copy-of-${name}`));
  }
  return path;
}

/** Every key of the file that holds a value rather than more keys (`targets` aside). */
function leafKeys(): string[] {
  const keys = schemaKeys(configFileSchema).filter((key) => SETTING_PATHS.has(key));
  return keys.filter((key) => !keys.some((other) => other.startsWith(`${key}.`)));
}

function schemaAt(path: string): z.ZodType {
  let schema: z.ZodType = configFileSchema;
  for (const key of path.split('.')) {
    const object = unwrap(schema);
    if (!(object instanceof z.ZodObject)) throw new Error(`${path}: not an object at ${key}`);
    schema = (object.shape as Record<string, z.ZodType>)[key] as z.ZodType;
  }
  return unwrap(schema);
}

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;
}

function getIn(object: FileObject, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((value, key) => (value as FileObject | undefined)?.[key], object);
}

function setIn(object: FileObject, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let parent = object;
  for (const key of keys) parent = (parent[key] ??= {}) as FileObject;
  parent[last] = value;
}

/**
 * Keys whose value cannot be derived from their type: a valid other URL, a second file with the
 * same contents, a user. `before` adjusts the base file when the key needs another form of it.
 */
const SPECIAL_CHANGES: Record<
  string,
  { before?: (file: FileObject) => void; after: (file: FileObject) => void }
> = {
  'reads.testMetricsPeriod': {
    after: (file) => {
      setIn(file, 'reads.testMetricsPeriod', '30d');
    },
  },
  'trunk.apiUrl': {
    after: (file) => {
      setIn(file, 'trunk.apiUrl', 'http://127.0.0.1:2/v1');
    },
  },
  'trunk.tokenFile': {
    before: (file) => {
      delete (file.trunk as FileObject).token;
      setIn(file, 'trunk.tokenFile', 'token');
    },
    after: (file) => {
      setIn(file, 'trunk.tokenFile', 'token-copy');
    },
  },
  'trunk.apiKeyFile': {
    before: (file) => {
      delete (file.trunk as FileObject).apiKey;
      setIn(file, 'trunk.apiKeyFile', 'api-key');
    },
    after: (file) => {
      setIn(file, 'trunk.apiKeyFile', 'api-key-copy');
    },
  },
  'server.tls.certFile': {
    after: (file) => {
      setIn(file, 'server.tls.certFile', 'copy-of-server.crt');
    },
  },
  'server.tls.keyFile': {
    after: (file) => {
      setIn(file, 'server.tls.keyFile', 'copy-of-server.key');
    },
  },
  'metrics.include': {
    after: (file) => {
      setIn(file, 'metrics.include', ['trunk_merge_queue_state']);
    },
  },
  'metrics.exclude': {
    after: (file) => {
      setIn(file, 'metrics.exclude', ['trunk_merge_queue_info']);
    },
  },
  'server.basicAuthUsers': {
    after: (file) => {
      setIn(file, 'server.basicAuthUsers', { alice: BCRYPT_HASH });
    },
  },
  // Enabled needs a secret, so the secret is there before and after.
  'webhooks.enabled': {
    before: (file) => {
      setIn(file, 'webhooks.signingSecret', WEBHOOK_SECRET);
    },
    after: (file) => {
      setIn(file, 'webhooks.enabled', true);
    },
  },
  'webhooks.signingSecret': {
    after: (file) => {
      setIn(file, 'webhooks.signingSecret', OTHER_WEBHOOK_SECRET);
    },
  },
  'webhooks.signingSecretFile': {
    before: (file) => {
      setIn(file, 'webhooks.signingSecretFile', 'webhook-secret');
    },
    after: (file) => {
      setIn(file, 'webhooks.signingSecretFile', 'webhook-secret-copy');
    },
  },
  'discovery.repos': {
    after: (file) => {
      setIn(file, 'discovery.repos', ['github.com/acme/*']);
    },
  },
  'discovery.branches': {
    after: (file) => {
      setIn(file, 'discovery.branches', ['main']);
    },
  },
  // The default is the largest tolerance there is.
  'webhooks.toleranceSeconds': {
    after: (file) => {
      setIn(file, 'webhooks.toleranceSeconds', 60);
    },
  },
};

/** A different valid value for a key of this type, from the base file's (or the default) value. */
function changedValue(path: string, current: unknown): unknown {
  const schema = schemaAt(path);
  // An optional number without a default (trunk.maxResponseBytes) changes from unset to a value.
  if (schema instanceof z.ZodNumber) return ((current as number | undefined) ?? 1024) + 1;
  if (schema instanceof z.ZodBoolean) return !(current as boolean);
  if (schema instanceof z.ZodString) return `${(current as string | undefined) ?? 'value'}-changed`;
  throw new Error(
    `no way to change ${path} (${schema.constructor.name}): add it to SPECIAL_CHANGES`,
  );
}

function baseFile(): FileObject {
  return {
    trunk: {
      apiUrl: 'http://127.0.0.1:1/v1',
      token: 'token-inline',
      apiKey: 'trunk_v2_inline',
      orgUrlSlug: 'acme',
    },
    server: { tls: { certFile: 'server.crt', keyFile: 'server.key' } },
    sharding: { totalShards: 2 },
    targets: [{ repo: 'github.com/acme/web', branches: ['main'], flakyTests: true }],
  };
}

/** Loads a file object as the exporter would, file paths resolved in `path`'s directory. */
async function load(file: FileObject, path: (name: string) => string): Promise<ExporterConfig> {
  const resolved = structuredClone(file);
  for (const key of [
    'trunk.tokenFile',
    'trunk.apiKeyFile',
    'server.tls.certFile',
    'server.tls.keyFile',
    'webhooks.signingSecretFile',
  ]) {
    const name = getIn(resolved, key);
    if (typeof name === 'string') setIn(resolved, key, path(name));
  }
  return parseConfig(stringify(resolved), { source: 'test.yaml', env: {} });
}

describe('settings a reload reports', () => {
  it('names every key of the configuration schema, each changed alone, and nothing else', async () => {
    const path = await settingFiles();
    const keys = leafKeys();
    // The walk itself must see the keys this project knows it has, nested ones included.
    expect(keys).toEqual(
      expect.arrayContaining([
        'trunk.tokenFile',
        'server.tls.certFile',
        'polling.pullRequestRecheckSeconds',
        'polling.flakyTestDetails',
        'sharding.shard',
        'sharding.totalShards',
      ]),
    );
    const reported: Record<string, readonly string[]> = {};
    const summaries: Record<string, string> = {};
    for (const key of keys) {
      const before = baseFile();
      SPECIAL_CHANGES[key]?.before?.(before);
      const after = structuredClone(before);
      const special = SPECIAL_CHANGES[key];
      if (special) special.after(after);
      else {
        const defaults = configFileSchema.parse(before) as FileObject;
        setIn(after, key, changedValue(key, getIn(defaults, key)));
      }
      const changes = diffConfigs(await load(before, path), await load(after, path), LISTENING);
      reported[key] = changes.settingsChanged;
      summaries[key] = summarizeChanges(changes);
    }
    expect(reported).toEqual(Object.fromEntries(keys.map((key) => [key, [key]])));
    for (const key of keys) expect(summaries[key]).toContain(`settings changed: ${key}`);
  });

  it('names server.tls when the certificate at the same path is renewed', async () => {
    const path = await settingFiles();
    const before = await load(baseFile(), path);
    await copyFile(join(TLS_FIXTURES, 'rotated.crt'), path('server.crt'));
    await copyFile(join(TLS_FIXTURES, 'rotated.key'), path('server.key'));
    const after = await load(baseFile(), path);
    expect(diffConfigs(before, after, LISTENING).settingsChanged).toEqual(['server.tls']);
  });

  it('names server.tls alone when TLS is turned off, not each of its keys', async () => {
    const path = await settingFiles();
    const withoutTls = baseFile();
    delete (withoutTls.server as FileObject).tls;
    const changes = diffConfigs(
      await load(baseFile(), path),
      await load(withoutTls, path),
      LISTENING,
    );
    expect(changes.settingsChanged).toEqual(['server.tls']);
    expect(changes.needRestart).toEqual(['server.tls']);
  });

  it('reports nothing for the same file loaded twice', async () => {
    const path = await settingFiles();
    const changes = diffConfigs(
      await load(baseFile(), path),
      await load(baseFile(), path),
      LISTENING,
    );
    expect(summarizeChanges(changes)).toBe('0 targets added, 0 removed; no settings changed');
  });
});
