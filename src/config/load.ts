import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import { expandEnvironment } from './environment.js';
import { ConfigError, formatPath, problemsFromZod, type ConfigProblem } from './problems.js';
import { configFileSchema, repoName, type ConfigFile } from './schema.js';
import { Secret } from './secret.js';
import { describeError, readServerTls, readSettingFile } from './settingFiles.js';
import type { ExporterConfig, RepositoryTarget, ServerTls } from './types.js';

/** The environment variable read for the token when neither `token` nor `tokenFile` is set. */
export const TOKEN_ENVIRONMENT_VARIABLE = 'TRUNK_API_TOKEN';

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
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [
      { path: '', message: `cannot read file: ${describeError(error)}` },
    ]);
  }
  return parseConfig(text, { env, source: path });
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
  const expanded = expandEnvironment(document.toJS() ?? {}, context.env);
  const problems: ConfigProblem[] = expanded.missing.map((missing) => ({
    path: formatPath(missing.path),
    message: `environment variable ${missing.name} is not set`,
    ...lineAt(document, missing.path, lineCounter),
  }));
  const parsed = configFileSchema.safeParse(expanded.value);
  if (!parsed.success) {
    const unsetPaths = new Set(expanded.missing.map((missing) => formatPath(missing.path)));
    for (const problem of problemsFromZod(parsed.error.issues)) {
      // A value emptied by an unset variable fails validation too; its first message says why.
      if (unsetPaths.has(formatPath(problem.path))) continue;
      problems.push({
        path: formatPath(problem.path),
        message: problem.message,
        ...lineAt(document, problem.path, lineCounter),
      });
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(context.source, problems);

  const [token, tls] = await Promise.all([
    resolveToken(parsed.data, context.env),
    readServerTls(parsed.data.server.tls),
  ]);
  if ('problem' in token || 'problems' in tls) {
    const fileProblems = [
      ...('problem' in token ? [token.problem] : []),
      ...('problems' in tls ? tls.problems : []),
    ];
    throw new ConfigError(
      context.source,
      fileProblems.map((problem) => ({
        ...problem,
        ...lineAt(document, problem.path.split('.'), lineCounter),
      })),
    );
  }
  return normalize(parsed.data, token.secret, tls.tls);
}

async function resolveToken(
  config: ConfigFile,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ secret: Secret } | { problem: ConfigProblem }> {
  const { token, tokenFile } = config.trunk;
  if (token !== undefined) return { secret: new Secret(token) };
  if (tokenFile !== undefined) {
    const file = await readSettingFile(tokenFile, 'trunk.tokenFile');
    if ('problem' in file) return file;
    const trimmed = file.text.trim();
    if (trimmed === '')
      return { problem: { path: 'trunk.tokenFile', message: `${tokenFile} is empty` } };
    return { secret: new Secret(trimmed) };
  }
  const fromEnvironment = env[TOKEN_ENVIRONMENT_VARIABLE];
  if (fromEnvironment !== undefined && fromEnvironment !== '') {
    return { secret: new Secret(fromEnvironment) };
  }
  return {
    problem: {
      path: 'trunk.token',
      message: `no API token: set trunk.token, trunk.tokenFile or the ${TOKEN_ENVIRONMENT_VARIABLE} environment variable`,
    },
  };
}

function normalize(config: ConfigFile, token: Secret, tls: ServerTls | undefined): ExporterConfig {
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
      tls,
      basicAuthUsers: new Map(Object.entries(config.server.basicAuthUsers ?? {})),
    },
    polling: { ...config.polling },
    metrics: { ...config.metrics },
    sharding: { ...config.sharding },
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
): { line?: number } {
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
