import { z } from 'zod';
import {
  LineCounter,
  parseDocument,
  isAlias,
  isMap,
  isNode,
  isScalar,
  visit,
  type Document,
  type Node,
} from 'yaml';
import { expandEnvironment } from './environment.js';
import { ConfigError, formatPath, problemsFromZod, type ConfigProblem } from './problems.js';
import { configFileSchema, repoName, type ConfigFile } from './schema.js';
import type { Secret } from '../secrets/secret.js';
import { apiHostUrl, versionSegmentOf } from '../trunk/apiUrl.js';
import { apiKeyWarning, resolveCredentials, type TrunkCredentials } from './credentials.js';
import { readRegularFile, readServerTls } from './settingFiles.js';
import type { ExporterConfig, RepositoryTarget, ServerTls } from './types.js';
import { resolveWebhookSecret } from './webhookSecret.js';

export { API_KEY_ENVIRONMENT_VARIABLE, TOKEN_ENVIRONMENT_VARIABLE } from './credentials.js';
/** Largest configuration file read (about 50,000 targets); /dev/zero must not fill memory. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;
/**
 * The `yaml` package's guard against alias bombs (a few lines whose aliases expand to billions of
 * nodes): over this many alias expansions the file is refused. Above its default of 100, so that a
 * list of branches can be shared by a few hundred targets.
 */
export const MAX_YAML_ALIAS_COUNT = 1000;

interface LoadContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Name used in messages (the file path). */
  readonly source: string;
}

/** Reads, expands, validates and normalizes a configuration file; throws ConfigError with every problem. */
export async function loadConfigFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ExporterConfig> {
  const file = await readRegularFile(path, MAX_CONFIG_FILE_BYTES);
  if ('reason' in file) {
    throw new ConfigError(path, [{ path: '', message: `cannot read file: ${file.reason}` }]);
  }
  return parseConfig(file.text, { env, source: path });
}

/** Validates configuration text (YAML); throws ConfigError with every problem found. */
export async function parseConfig(text: string, context: LoadContext): Promise<ExporterConfig> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      context.source,
      document.errors.map((error) => ({
        path: '',
        message: `YAML: ${error.message.split('\n')[0] ?? error.message}`,
        ...lineOf(error.pos[0], lineCounter),
      })),
    );
  }
  const value = documentValue(document, lineCounter, context.source);
  const expanded = expandEnvironment(value ?? {}, context.env);
  const problems: (ConfigProblem & { readonly order: number })[] = [];
  const add = (problem: ConfigProblem) => problems.push({ ...problem, order: problems.length });
  for (const missing of expanded.missing) {
    add({
      path: formatPath(missing.path),
      message: `environment variable ${missing.name} is not set`,
      ...lineAt(document, missing.path, lineCounter),
    });
  }
  const parsed = configFileSchema.safeParse(expanded.value);
  if (!parsed.success) {
    const unsetPaths = new Set(expanded.missing.map((missing) => formatPath(missing.path)));
    for (const problem of problemsFromZod(parsed.error.issues)) {
      // A value emptied by an unset variable fails validation too; its first message says why.
      if (unsetPaths.has(formatPath(problem.path))) continue;
      add({
        path: formatPath(problem.path),
        message: problem.message,
        ...lineAt(document, problem.path, lineCounter, problem.linePath),
      });
    }
  }
  // The credentials, the TLS files and the webhook secret are read whenever their own settings
  // are valid, so that a file problem is reported together with every other one.
  const [credentials, tls, webhookSecret] = await Promise.all([
    resolveCredentials(settingsOf(expanded.value, 'trunk'), context.env),
    readServerTls(tlsSettingOf(expanded.value)),
    resolveWebhookSecret(settingsOf(expanded.value, 'webhooks')),
  ]);
  if (typeof credentials === 'object' && 'credentials' in credentials) {
    const { apiKey } = credentials.credentials;
    const discovery = settingsOf(expanded.value, 'discovery');
    if (apiKey === undefined && isRecord(discovery) && discovery.enabled === true) {
      add({
        path: 'discovery.enabled',
        message:
          'needs an API v2 key (trunk.apiKey, trunk.apiKeyFile or the TRUNK_API_KEY environment variable): discovery lists merge queues through API v2',
        ...lineAt(document, ['discovery', 'enabled'], lineCounter),
      });
    }
    const orgSlugProblem = flakyTestsWithoutSource(expanded.value, credentials.credentials);
    if (orgSlugProblem !== undefined) {
      add({
        ...orgSlugProblem,
        ...lineAt(document, ['trunk', 'orgUrlSlug'], lineCounter, orgSlugProblem.linePath),
      });
    }
  }
  const fileProblems = [
    ...(typeof credentials === 'object' && 'problems' in credentials ? credentials.problems : []),
    ...('problems' in tls ? tls.problems : []),
    ...('problem' in webhookSecret ? [webhookSecret.problem] : []),
  ];
  for (const problem of fileProblems) {
    add({ ...problem, ...lineAt(document, problem.path.split('.'), lineCounter) });
  }
  if (
    problems.length > 0 ||
    !parsed.success ||
    typeof credentials !== 'object' ||
    !('credentials' in credentials) ||
    !('tls' in tls) ||
    !('secret' in webhookSecret)
  ) {
    // In file order; problems without a line (about the whole file) first.
    problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.order - b.order);
    throw new ConfigError(
      context.source,
      problems.map(({ order: _order, ...problem }) => problem),
    );
  }
  return normalize(parsed.data, credentials.credentials, tls.tls, webhookSecret.secret);
}

/** The document as plain data; an alias bomb is a problem at the alias that set it off. */
function documentValue(document: Document, lineCounter: LineCounter, source: string): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (error) {
    const excessive = error instanceof Error && /excessive alias count/i.test(error.message);
    const message = excessive
      ? `aliases expand beyond the limit of ${MAX_YAML_ALIAS_COUNT} (an alias bomb?); write the values out instead`
      : error instanceof Error
        ? error.message
        : String(error);
    const offset = excessiveAliasOffset(document, MAX_YAML_ALIAS_COUNT);
    throw new ConfigError(source, [
      {
        path: '',
        message: `YAML: ${message}`,
        ...(offset === undefined ? {} : lineOf(offset, lineCounter)),
      },
    ]);
  }
}

/**
 * Where a reader should look for an alias bomb: the first alias (in file order) at which the
 * aliases so far, each counted with every alias its target holds, pass `limit`; else the first
 * alias. One pass in file order (anchors resolved as they are met), each anchored node walked once.
 */
function excessiveAliasOffset(document: Document, limit: number): number | undefined {
  const anchors = new Map<string, Node>();
  /** What an alias costs: itself and, recursively, every alias inside its target. */
  const aliasCosts = new Map<Node, number>();
  const targetCosts = new Map<Node, number>();
  const targetCost = (target: Node): number => {
    const known = targetCosts.get(target);
    if (known !== undefined) return known;
    let cost = 0;
    // Aliases inside the target come before it is referenced, so theirs are known.
    visit(target, {
      Alias(_key, alias) {
        cost += aliasCosts.get(alias) ?? 1;
      },
    });
    targetCosts.set(target, cost);
    return cost;
  };
  let first: number | undefined;
  let found: number | undefined;
  let total = 0;
  visit(document, {
    Node(_key, node) {
      if (isAlias(node)) {
        first ??= node.range?.[0];
        const target = anchors.get(node.source);
        const cost = 1 + (target === undefined ? 0 : targetCost(target));
        aliasCosts.set(node, cost);
        total += cost;
        if (total <= limit) return undefined;
        found = node.range?.[0];
        return visit.BREAK;
      }
      if (node.anchor !== undefined) anchors.set(node.anchor, node);
      return undefined;
    },
  });
  return found ?? first;
}

/** `value[key]`, `{}` when the key is absent, undefined when `value` is not a mapping. */
function settingsOf(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return (value as Record<string, unknown>)[key] ?? {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `server.tls` when it names both files, else undefined (the schema reports what is wrong). */
function tlsSettingOf(value: unknown): { certFile: string; keyFile: string } | undefined {
  const tls = z
    .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
    .safeParse(settingsOf(settingsOf(value, 'server'), 'tls'));
  return tls.success ? tls.data : undefined;
}

/**
 * A target with `flakyTests: true` read through API v1 needs `trunk.orgUrlSlug`; with an API key
 * the quarantine list comes from API v2, which needs none.
 */
function flakyTestsWithoutSource(
  value: unknown,
  credentials: TrunkCredentials,
): { path: string; message: string; linePath: PropertyKey[] } | undefined {
  if (credentials.apiKey !== undefined) return undefined;
  const trunk = settingsOf(value, 'trunk');
  if (trunk !== null && typeof trunk === 'object' && 'orgUrlSlug' in trunk) return undefined;
  const targets = settingsOf(value, 'targets');
  if (!Array.isArray(targets)) return undefined;
  const index = targets.findIndex(
    (target: unknown) =>
      target !== null &&
      typeof target === 'object' &&
      (target as Record<string, unknown>).flakyTests === true,
  );
  if (index < 0) return undefined;
  return {
    path: 'trunk.orgUrlSlug',
    message: 'required when any target has flakyTests: true and no API key is set',
    linePath: ['targets', index, 'flakyTests'],
  };
}

function normalize(
  config: ConfigFile,
  credentials: TrunkCredentials,
  tls: ServerTls | undefined,
  webhookSecret: Secret | undefined,
): ExporterConfig {
  const targets: RepositoryTarget[] = config.targets.map((target) => {
    const repo = typeof target.repo === 'string' ? splitRepo(target.repo) : { ...target.repo };
    return {
      repo,
      name: repoName(target.repo),
      branches: [...target.branches],
      flakyTests: target.flakyTests,
    };
  });
  const warnings = [
    ...[apiUrlWarning(config.trunk.apiUrl)].filter((warning) => warning !== undefined),
    ...[apiKeyWarning(credentials.apiKey)].filter((warning) => warning !== undefined),
  ];
  return {
    trunk: {
      apiUrl: apiHostUrl(config.trunk.apiUrl),
      token: credentials.token,
      tokenFile: config.trunk.tokenFile,
      apiKey: credentials.apiKey,
      apiKeyFile: config.trunk.apiKeyFile,
      orgUrlSlug: config.trunk.orgUrlSlug,
      timeoutSeconds: config.trunk.timeoutSeconds,
      maxConcurrentRequests: config.trunk.maxConcurrentRequests,
      maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
      maxResponseBytes: config.trunk.maxResponseBytes,
    },
    server: {
      address: config.server.address,
      port: config.server.port,
      enableReload: config.server.enableReload,
      maxConnections: config.server.maxConnections,
      maxConnectionsPerAddress: config.server.maxConnectionsPerAddress,
      tls,
      basicAuthUsers: new Map(Object.entries(config.server.basicAuthUsers ?? {})),
    },
    polling: { ...config.polling },
    metrics: { ...config.metrics },
    sharding: { ...config.sharding },
    discovery: {
      ...config.discovery,
      repos: [...config.discovery.repos],
      branches: [...config.discovery.branches],
    },
    webhooks: {
      enabled: config.webhooks.enabled,
      path: config.webhooks.path,
      signingSecret: webhookSecret,
      signingSecretFile: config.webhooks.signingSecretFile,
      toleranceSeconds: config.webhooks.toleranceSeconds,
      bodyTimeoutSeconds: config.webhooks.bodyTimeoutSeconds,
    },
    targets,
    ...(warnings.length === 0 ? {} : { warnings }),
  };
}

function splitRepo(repo: string): { host: string; owner: string; name: string } {
  const [host = '', owner = '', name = ''] = repo.split('/');
  return { host, owner, name };
}

function lineAt(
  document: Document,
  path: readonly PropertyKey[],
  lineCounter: LineCounter,
  /** Where to point instead when `path` itself is not in the file (a required key left out). */
  fallback?: readonly PropertyKey[],
): { line?: number } {
  if (fallback !== undefined && !document.hasIn(path)) {
    const line = lineAt(document, fallback, lineCounter);
    if (line.line !== undefined) return line;
  }
  // Point at the deepest part of the path that exists in the file (a missing key has no node), and
  // at its key rather than its value, which for a nested block starts on a later line.
  for (let length = path.length; length > 0; length--) {
    const prefix = path.slice(0, length);
    const parent: unknown =
      length === 1 ? document.contents : document.getIn(prefix.slice(0, -1), true);
    const last = prefix[length - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
      if (pair && isNode(pair.key) && pair.key.range) return lineOf(pair.key.range[0], lineCounter);
    }
    const node: unknown = document.getIn(prefix, true);
    if (isNode(node) && node.range) return lineOf(node.range[0], lineCounter);
  }
  return {};
}

function lineOf(offset: number, lineCounter: LineCounter): { line?: number } {
  return { line: lineCounter.linePos(offset).line };
}

/** The warning for a `trunk.apiUrl` that ends in a version segment, which the client appends itself. */
function apiUrlWarning(apiUrl: string): string | undefined {
  const segment = versionSegmentOf(apiUrl);
  if (segment === undefined) return undefined;
  const using = `the exporter appends /v1 and /v2 itself; using ${apiHostUrl(apiUrl)}`;
  return segment === 'v1'
    ? `trunk.apiUrl ends in /v1, which is deprecated: it is the host now and ${using}`
    : `trunk.apiUrl ends in /${segment}: it is the host, and ${using}`;
}
