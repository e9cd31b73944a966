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
import { configFileSchema, repoName, trunkSectionSchema, type ConfigFile } from './schema.js';
import { Secret } from '../secrets/secret.js';
import { readRegularFile, readServerTls, readSettingFile } from './settingFiles.js';
import type { ExporterConfig, RepositoryTarget, ServerTls } from './types.js';
import { resolveWebhookSecret } from './webhookSecret.js';

/** The environment variable read for the token when neither `token` nor `tokenFile` is set. */
export const TOKEN_ENVIRONMENT_VARIABLE = 'TRUNK_API_TOKEN';
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
  // The token, the TLS files and the webhook secret are read whenever their own settings are
  // valid, so that a file problem is reported together with every other one.
  const [token, tls, webhookSecret] = await Promise.all([
    resolveToken(settingsOf(expanded.value, 'trunk'), context.env),
    readServerTls(tlsSettingOf(expanded.value)),
    resolveWebhookSecret(settingsOf(expanded.value, 'webhooks')),
  ]);
  const fileProblems = [
    ...('problem' in token ? [token.problem] : []),
    ...('problems' in tls ? tls.problems : []),
    ...('problem' in webhookSecret ? [webhookSecret.problem] : []),
  ];
  for (const problem of fileProblems) {
    add({ ...problem, ...lineAt(document, problem.path.split('.'), lineCounter) });
  }
  if (
    problems.length > 0 ||
    !parsed.success ||
    !('secret' in token) ||
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
  return normalize(parsed.data, token.secret, tls.tls, webhookSecret.secret);
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

/** `server.tls` when it names both files, else undefined (the schema reports what is wrong). */
function tlsSettingOf(value: unknown): { certFile: string; keyFile: string } | undefined {
  const tls = z
    .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
    .safeParse(settingsOf(settingsOf(value, 'server'), 'tls'));
  return tls.success ? tls.data : undefined;
}

async function resolveToken(
  trunkSettings: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ secret: Secret } | { problem: ConfigProblem } | { invalid: true }> {
  const trunk = trunkSectionSchema.safeParse(trunkSettings);
  // The schema reports what is wrong with the trunk section; the token waits until it is right.
  if (!trunk.success) return { invalid: true };
  const { token, tokenFile } = trunk.data;
  if (token !== undefined) {
    return checkedToken(token, 'trunk.token', 'not a valid HTTP header value');
  }
  if (tokenFile !== undefined) {
    const file = await readSettingFile(tokenFile, 'trunk.tokenFile');
    if ('problem' in file) return file;
    const trimmed = file.text.trim();
    if (trimmed === '')
      return { problem: { path: 'trunk.tokenFile', message: `${tokenFile} is empty` } };
    return checkedToken(
      trimmed,
      'trunk.tokenFile',
      `the token in ${tokenFile} is not a valid HTTP header value`,
    );
  }
  const fromEnvironment = env[TOKEN_ENVIRONMENT_VARIABLE];
  if (fromEnvironment !== undefined && fromEnvironment !== '') {
    return checkedToken(
      fromEnvironment,
      '',
      `the ${TOKEN_ENVIRONMENT_VARIABLE} environment variable is not a valid HTTP header value`,
    );
  }
  return {
    problem: {
      path: 'trunk.token',
      message: `no API token: set trunk.token, trunk.tokenFile or the ${TOKEN_ENVIRONMENT_VARIABLE} environment variable`,
    },
  };
}

/**
 * The token as a Secret, or a problem at `path` when it cannot be sent as a header: undici would
 * refuse every call with it (a newline from `echo token > file` inside it, a trailing one in a
 * variable). The message names the kind and position of the character, never the token.
 */
function checkedToken(
  token: string,
  path: string,
  what: string,
): { secret: Secret } | { problem: ConfigProblem } {
  const reason = headerValueProblem(token);
  return reason === undefined
    ? { secret: new Secret(token) }
    : { problem: { path, message: `${what}: ${reason}` } };
}

/** Why `value` is not a valid HTTP header value (RFC 9110 field-value, as undici checks it). */
function headerValueProblem(value: string): string | undefined {
  const invalid = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
  if (invalid !== null) {
    const code = invalid[0].codePointAt(0) ?? 0;
    const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    const kind =
      invalid[0] === '\n'
        ? `a line break (${hex})`
        : invalid[0] === '\r'
          ? `a carriage return (${hex})`
          : code < 0x20 || code === 0x7f
            ? `a control character (${hex})`
            : 'a character outside Latin-1';
    return `contains ${kind} at character ${invalid.index + 1}`;
  }
  // A server trims these, so the token it compares would not be the one configured.
  if (/^[\t ]|[\t ]$/.test(value)) return 'starts or ends with white space';
  return undefined;
}

function normalize(
  config: ConfigFile,
  token: Secret,
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
  return {
    trunk: {
      apiUrl: config.trunk.apiUrl.replace(/\/+$/, ''),
      token,
      tokenFile: config.trunk.tokenFile,
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
      tls,
      basicAuthUsers: new Map(Object.entries(config.server.basicAuthUsers ?? {})),
    },
    polling: { ...config.polling },
    metrics: { ...config.metrics },
    sharding: { ...config.sharding },
    webhooks: {
      enabled: config.webhooks.enabled,
      path: config.webhooks.path,
      signingSecret: webhookSecret,
      signingSecretFile: config.webhooks.signingSecretFile,
      toleranceSeconds: config.webhooks.toleranceSeconds,
      bodyTimeoutSeconds: config.webhooks.bodyTimeoutSeconds,
    },
    targets,
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
