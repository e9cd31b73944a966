import { z } from 'zod';
import { LineCounter } from 'yaml';
import { expandEnvironment, MAX_EXPANDED_CHARACTERS } from './environment.js';
import { ConfigError, formatPath, problemsFromZod, type ConfigProblem } from './problems.js';
import { unknownKeyMessages } from './unknownKeys.js';
import {
  configFileSchema,
  MAX_METRIC_SELECTION_ENTRIES,
  metricNamePattern,
  repoName,
  type ConfigFile,
} from './schema.js';
import type { Secret } from '../secrets/secret.js';
import { apiHostUrl } from '../trunk/apiUrl.js';
import { credentialRuleProblems } from './credentialRules.js';
import { isRecord } from './fileValue.js';
import { resolveCredentials, type TrunkCredentials } from './credentials.js';
import { readRegularFile, readServerTls } from './settingFiles.js';
import { MAX_SETTING_CHARACTERS, overLongStrings } from './settingLengths.js';
import type { ExporterConfig, RepositoryTarget, ServerTls } from './types.js';
import { configWarnings } from './warnings.js';
import { resolveWebhookSecret } from './webhookSecret.js';
import {
  DocumentLines,
  documentValue,
  duplicateKeyOffsets,
  lineOf,
  MAX_YAML_DEPTH,
  MAX_YAML_VALUES,
  parseYamlDocument,
  unclosedQuoteOffset,
} from './yamlDocument.js';

export { API_KEY_ENVIRONMENT_VARIABLE, TOKEN_ENVIRONMENT_VARIABLE } from './credentials.js';
export { MAX_YAML_ALIAS_COUNT } from './yamlDocument.js';
/**
 * Largest configuration file read: /dev/zero must not fill memory (MAX_YAML_VALUES bounds what a
 * file read holds).
 */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;

/**
 * What is wrong with one entry of `metrics.include` or `metrics.exclude` (it names no family, or
 * only families that always stay), or undefined. The family names live in the metrics layer, which
 * passes this in.
 */
export type MetricSelectionCheck = (
  list: 'include' | 'exclude',
  entry: string,
) => string | undefined;

/**
 * Why a valid entry of `metrics.include` selects nothing under the file's other settings (a family
 * only webhook events move, with webhooks off), or undefined: a warning. An `exclude` entry that
 * drops nothing more costs nothing.
 */
export type MetricSelectionWarning = (
  entry: string,
  settings: { readonly webhooksEnabled: boolean },
) => string | undefined;

/** Checks of the file that need knowledge from above the config layer. */
export interface ConfigChecks {
  readonly metricSelection?: MetricSelectionCheck;
  readonly metricSelectionWarning?: MetricSelectionWarning;
}

interface LoadContext extends ConfigChecks {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Name used in messages (the file path). */
  readonly source: string;
}

/** Reads, expands, validates and normalizes a configuration file; throws ConfigError with every problem. */
export async function loadConfigFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  checks: ConfigChecks = {},
): Promise<ExporterConfig> {
  const file = await readRegularFile(path, MAX_CONFIG_FILE_BYTES);
  if ('reason' in file) {
    // The likeliest first run: no config written yet, or `--config` left out (./config.yaml).
    const hint =
      file.reason === 'ENOENT'
        ? ', no such file (write one from config.example.yaml, or name another with --config FILE)'
        : '';
    throw new ConfigError(path, [{ path: '', message: `cannot read file: ${file.reason}${hint}` }]);
  }
  return parseConfig(file.text, { ...checks, env, source: path });
}

/** Validates configuration text (YAML); throws ConfigError with every problem found. */
export async function parseConfig(text: string, context: LoadContext): Promise<ExporterConfig> {
  const nul = text.indexOf('\u0000');
  if (nul !== -1) {
    // UTF-16 (Windows editors' "Unicode") puts a NUL beside every ASCII character, which YAML
    // would read as one odd string; YAML allows no NUL at all in a UTF-8 file.
    throw new ConfigError(context.source, [
      {
        path: '',
        message:
          'the file is not UTF-8 text: it holds NUL bytes, as UTF-16 or a binary file does; save it as UTF-8',
        line: text.slice(0, nul).split('\n').length,
      },
    ]);
  }
  const lineCounter = new LineCounter();
  // Keys are checked for repeats below, in linear time, instead of by the package's `uniqueKeys`.
  const document = parseYamlDocument(text, { lineCounter, uniqueKeys: false });
  if ('refused' in document) {
    throw new ConfigError(context.source, [
      {
        path: '',
        message:
          document.refused === 'too_deep'
            ? `YAML: mappings and lists nested deeper than ${MAX_YAML_DEPTH} levels (the settings nest 4 deep)`
            : `YAML: more than ${String(MAX_YAML_VALUES)} values (10,000 targets are about 110,000; discovery finds more)`,
        ...lineOf(document.at, lineCounter),
      },
    ]);
  }
  const yamlErrors = [
    ...document.errors.map((error) => ({
      message: error.message.split('\n')[0] ?? error.message,
      offset:
        (error.code === 'MISSING_CHAR' && error.message.includes('quote')
          ? unclosedQuoteOffset(text)
          : undefined) ?? error.pos[0],
    })),
    ...duplicateKeyOffsets(document).map((offset) => ({
      message: 'Map keys must be unique',
      offset,
    })),
  ].sort((a, b) => a.offset - b.offset);
  if (yamlErrors.length > 0) {
    throw new ConfigError(
      context.source,
      yamlErrors.map((error) => ({
        path: '',
        message: `YAML: ${error.message}`,
        ...lineOf(error.offset, lineCounter),
      })),
    );
  }
  const lines = new DocumentLines(document, lineCounter);
  const value = documentValue(document, lineCounter, context.source);
  if (value !== null && value !== undefined && !isRecord(value)) {
    // Binary garbage parses as one long string; "expected object, got string" did not say so.
    const kind = Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    throw new ConfigError(context.source, [
      { path: '', message: `the file is not a YAML mapping of settings: it parses as ${kind}` },
    ]);
  }
  const expanded = expandEnvironment(value ?? {}, context.env);
  const problems: (ConfigProblem & { readonly order: number })[] = [];
  const add = (problem: ConfigProblem) => problems.push({ ...problem, order: problems.length });
  const fail = (): never => {
    // In file order; problems without a line (about the whole file) first.
    problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.order - b.order);
    throw new ConfigError(
      context.source,
      problems.map(({ order: _order, ...problem }) => problem),
    );
  };
  for (const missing of expanded.missing) {
    add({
      path: formatPath(missing.path),
      message: `environment variable ${missing.name} is not set`,
      ...lines.lineAt(missing.path),
    });
  }
  if (expanded.overLimit !== undefined) {
    // The values past the limit were left out, so the settings are not what the file says.
    add({
      path: formatPath(expanded.overLimit.path),
      message:
        `environment variable ${expanded.overLimit.name}: the \${…} references up to here expand ` +
        `to more than ${MAX_EXPANDED_CHARACTERS / (1024 * 1024)} MiB, more than the file may hold`,
      ...lines.lineAt(expanded.overLimit.path),
    });
    fail();
  }
  const overLong = overLongStrings(expanded.value);
  if (overLong.length > 0) {
    // Checked no further: the checks after this would read a file the value names, or echo it.
    for (const { path, length } of overLong) {
      add({
        path: formatPath(path),
        message: `${length} characters, more than the ${MAX_SETTING_CHARACTERS} a setting may hold`,
        ...lines.lineAt(path),
      });
    }
    fail();
  }
  const parsed = configFileSchema.safeParse(expanded.value);
  if (!parsed.success) {
    const unsetPaths = new Set(expanded.missing.map((missing) => formatPath(missing.path)));
    for (const problem of problemsFromZod(parsed.error.issues, unknownKeyMessages())) {
      // A value emptied by an unset variable fails validation too; its first message says why.
      if (unsetPaths.has(formatPath(problem.path))) continue;
      add({
        path: formatPath(problem.path),
        message: problem.message,
        ...lines.lineAt(problem.path, problem.linePath),
      });
    }
  }
  // A document that is not a mapping has no settings to read further.
  if (!isRecord(expanded.value)) fail();
  // The credentials, the TLS files and the webhook secret are read whenever their own settings
  // are valid, whatever else is wrong, so that every problem is reported at once.
  const [credentials, tls, webhookSecret] = await Promise.all([
    resolveCredentials(settingsOf(expanded.value, 'trunk'), context.env),
    readServerTls(tlsSettingOf(expanded.value)),
    resolveWebhookSecret(settingsOf(expanded.value, 'webhooks')),
  ]);
  for (const problem of credentialRuleProblems(expanded.value, credentials.configured)) {
    add({
      path: formatPath(problem.path),
      message: problem.message,
      ...lines.lineAt(problem.path, problem.linePath),
    });
  }
  for (const problem of metricSelectionProblems(expanded.value, context.metricSelection)) {
    add({
      path: formatPath(problem.path),
      message: problem.message,
      ...lines.lineAt(problem.path),
    });
  }
  const fileProblems = [
    ...credentials.problems,
    ...('problems' in tls ? tls.problems : []),
    ...('problem' in webhookSecret ? [webhookSecret.problem] : []),
  ];
  for (const problem of fileProblems) {
    add({ ...problem, ...lines.lineAt(problem.path.split('.')) });
  }
  if (
    problems.length > 0 ||
    !parsed.success ||
    credentials.credentials === undefined ||
    !('tls' in tls) ||
    !('secret' in webhookSecret)
  ) {
    return fail();
  }
  const lineSuffix = (path: readonly PropertyKey[]): string => {
    const { line } = lines.lineAt(path);
    return line === undefined ? '' : ` (line ${line})`;
  };
  const warnings = [
    ...configWarnings(expanded.value, parsed.data, credentials.credentials, lineSuffix),
    ...metricSelectionWarnings(parsed.data, context.metricSelectionWarning, lineSuffix),
  ];
  return normalize(parsed.data, credentials.credentials, tls.tls, webhookSecret.secret, warnings);
}

/**
 * Each entry of `metrics.include` and `metrics.exclude` that is a valid name or glob but that
 * `check` finds wrong; the schema reports the entries that are not names at all.
 */
function metricSelectionProblems(
  value: unknown,
  check: MetricSelectionCheck | undefined,
): { path: PropertyKey[]; message: string }[] {
  const metrics = settingsOf(value, 'metrics');
  if (check === undefined || !isRecord(metrics)) return [];
  return (['include', 'exclude'] as const).flatMap((list) => {
    const entries = metrics[list];
    // A list over the limit is the schema's problem; its entries are not checked one by one.
    if (!Array.isArray(entries) || entries.length > MAX_METRIC_SELECTION_ENTRIES) return [];
    return entries.flatMap((entry: unknown, index) => {
      if (!metricNamePattern.safeParse(entry).success) return [];
      const message = check(list, entry as string);
      return message === undefined ? [] : [{ path: ['metrics', list, index], message }];
    });
  });
}

/** Each entry of `metrics.include` that `warn` finds selects nothing, as a warning. */
function metricSelectionWarnings(
  config: ConfigFile,
  warn: MetricSelectionWarning | undefined,
  lineSuffix: (path: readonly PropertyKey[]) => string,
): string[] {
  if (warn === undefined) return [];
  const settings = { webhooksEnabled: config.webhooks.enabled };
  return (config.metrics.include ?? []).flatMap((entry, index) => {
    const message = warn(entry, settings);
    const path = ['metrics', 'include', index];
    return message === undefined ? [] : [`${formatPath(path)}: ${message}${lineSuffix(path)}`];
  });
}

/** `value[key]`, `{}` when the key is absent, undefined when `value` is not a mapping. */
function settingsOf(value: unknown, key: string): unknown {
  return isRecord(value) ? (value[key] ?? {}) : undefined;
}

/** `server.tls` when it names both files, else undefined (the schema reports what is wrong). */
function tlsSettingOf(value: unknown): { certFile: string; keyFile: string } | undefined {
  const tls = z
    .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
    .safeParse(settingsOf(settingsOf(value, 'server'), 'tls'));
  return tls.success ? tls.data : undefined;
}

function normalize(
  config: ConfigFile,
  credentials: TrunkCredentials,
  tls: ServerTls | undefined,
  webhookSecret: Secret | undefined,
  warnings: readonly string[],
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
      maxTlsConnectionsPerAddressPerSecond: config.server.maxTlsConnectionsPerAddressPerSecond,
      tls,
      basicAuthUsers: new Map(Object.entries(config.server.basicAuthUsers ?? {})),
    },
    polling: { ...config.polling },
    metrics: { ...config.metrics },
    reads: { ...config.reads },
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
