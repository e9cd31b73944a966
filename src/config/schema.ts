import { z } from 'zod';
import { TRUNK_API_URL } from '../trunk/apiUrl.js';
import { V2_TEST_METRICS_PERIODS } from '../trunk/v2Schemas.js';
import { MAX_SHOWN_VALUE_CHARACTERS, displayText } from './problems.js';
import { repositoryKey } from './repositoryKey.js';

// The configuration file's schema. Every object is strict (unknown keys are errors, so a typo never
// silently falls back to a default) and every default lives here, once.

const positiveInt = z.number().int().positive();
const positiveNumber = z.number().positive();
const nonEmptyString = z.string().min(1, 'expected a non-empty string');

/**
 * Longest interval or timeout, in seconds (20 days): Node.js fires a timer of more than 2^31 − 1 ms
 * (24.8 days) after 1 ms, so a month's interval would poll without pause; 20 days leaves room for
 * the scheduler's 10 % jitter.
 */
export const MAX_TIMER_SECONDS = 20 * 24 * 60 * 60;
const timerSeconds = positiveNumber.max(
  MAX_TIMER_SECONDS,
  `expected at most ${MAX_TIMER_SECONDS} (20 days, the longest timer the exporter sets)`,
);
/** A metric family name in which `*` stands for any run of characters. */
export const metricNamePattern = z
  .string()
  .regex(/^[a-zA-Z_:*][a-zA-Z0-9_:*]*$/, 'expected a metric family name or a `*` glob of one');

/**
 * Entries of `metrics.include` or `metrics.exclude` at most, far more than there are families: each
 * entry that names none is compared with every family name for the nearest, work that a reload
 * does while scrapes wait.
 */
export const MAX_METRIC_SELECTION_ENTRIES = 1000;

const metricSelectionList = z
  .array(metricNamePattern)
  .max(
    MAX_METRIC_SELECTION_ENTRIES,
    `expected at most ${MAX_METRIC_SELECTION_ENTRIES} entries (names or \`*\` globs of the metric families)`,
  );

/**
 * Highest bcrypt cost accepted, as `htpasswd -B -C` allows: each step doubles a comparison's time,
 * and the one comparison of a cost-31 hash at load held the bcrypt thread, so every scraper's
 * check, for hours.
 */
export const MAX_BCRYPT_COST = 17;

// What htpasswd -B and Prometheus's web config produce: $2a$/$2b$/$2y$, a two-digit cost, 53 characters.
const bcryptHashPattern = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;
const bcryptHash = z
  .string({ error: 'expected a bcrypt hash string' })
  .regex(bcryptHashPattern, 'expected a bcrypt hash like $2y$10$… (60 characters)')
  .refine((hash) => !bcryptHashPattern.test(hash) || bcryptCostOf(hash) <= MAX_BCRYPT_COST, {
    error: (issue) =>
      `expected a bcrypt cost of at most ${MAX_BCRYPT_COST} (htpasswd's highest), not ${bcryptCostOf(String(issue.input))}: each step doubles a comparison's time`,
  });

/** The cost of a hash that matches bcryptHashPattern (`$2y$12$…` → 12). */
function bcryptCostOf(hash: string): number {
  return Number(hash.slice(4, 6));
}

const repoPattern = /^[^/\s]+\/[^/\s]+\/[^/\s]+$/;

const repoSchema = z.union(
  [
    z.string().regex(repoPattern, 'expected host/owner/name, e.g. github.com/acme/web'),
    z.strictObject({ host: nonEmptyString, owner: nonEmptyString, name: nonEmptyString }),
  ],
  { error: 'expected host/owner/name or an object {host, owner, name}' },
);

// A repository that uses Trunk Flaky Tests without a merge queue lists no branch.
const targetSchema = z
  .strictObject({
    repo: repoSchema,
    branches: z.array(nonEmptyString, { error: 'expected a list' }).default([]),
    flakyTests: z.boolean().default(false),
  })
  .refine((target) => target.branches.length > 0 || target.flakyTests, {
    message:
      'expected a non-empty list (or flakyTests: true for a repository without a merge queue)',
    path: ['branches'],
  });

export const trunkSectionSchema = z
  .strictObject({
    apiUrl: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
      // A user:password@ would be logged with the URL and never sent; the token is the only credential.
      .refine((url) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url), {
        error:
          'must not contain credentials (user:password@); the API token goes in trunk.token, trunk.tokenFile or TRUNK_API_TOKEN',
      })
      // The host: the client appends /v1/… and /v2/…; a value ending in /v1 is still accepted.
      .default(TRUNK_API_URL),
    token: nonEmptyString.optional(),
    tokenFile: nonEmptyString.optional(),
    apiKey: nonEmptyString.optional(),
    apiKeyFile: nonEmptyString.optional(),
    orgUrlSlug: nonEmptyString.optional(),
    timeoutSeconds: timerSeconds.default(10),
    maxConcurrentRequests: positiveInt.default(4),
    maxRequestsPerSecond: positiveNumber.default(10),
    // Absent: the client's default (DEFAULT_MAX_RESPONSE_BYTES, 32 MiB), kept in one place there.
    maxResponseBytes: positiveInt.optional(),
  })
  .refine((trunk) => trunk.token === undefined || trunk.tokenFile === undefined, {
    message: 'at most one of token & tokenFile',
    path: ['tokenFile'],
  })
  .refine((trunk) => trunk.apiKey === undefined || trunk.apiKeyFile === undefined, {
    message: 'at most one of apiKey & apiKeyFile',
    path: ['apiKeyFile'],
  });

/** The exporter's own endpoints; the webhook path must not be one of them. */
export const RESERVED_HTTP_PATHS = ['/', '/metrics', '/healthz', '/readyz', '/-/reload'] as const;
/** Default `webhooks.path`. */
export const DEFAULT_WEBHOOK_PATH = '/webhooks/trunk';
/**
 * Largest `webhooks.toleranceSeconds`: the svix library, which verifies every request, refuses a
 * timestamp more than 5 minutes from now whatever the exporter allows.
 */
export const MAX_WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Default `webhooks.bodyTimeoutSeconds`: Svix sends each body at once, so a request still sending
 * after this is not Svix, and holds a body slot that a delivery needs.
 */
export const DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS = 5;

// Plain path segments only: the path is compared as is, never used as an Express route pattern,
// and cannot hold a query, a fragment, `..` or a character that needs escaping.
const webhookPath = z
  .string()
  .max(200, 'expected at most 200 characters')
  .regex(
    /^(\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~-]+)+$/,
    'expected an absolute path of plain segments, e.g. /webhooks/trunk',
  )
  .refine((path) => !(RESERVED_HTTP_PATHS as readonly string[]).includes(path.toLowerCase()), {
    error: `must not be one of the exporter's own paths (${RESERVED_HTTP_PATHS.join(', ')})`,
  });

export const webhooksSectionSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    path: webhookPath.default(DEFAULT_WEBHOOK_PATH),
    signingSecret: nonEmptyString.optional(),
    signingSecretFile: nonEmptyString.optional(),
    toleranceSeconds: positiveInt
      .max(
        MAX_WEBHOOK_TOLERANCE_SECONDS,
        `expected at most ${MAX_WEBHOOK_TOLERANCE_SECONDS} (the svix library's own limit)`,
      )
      .default(MAX_WEBHOOK_TOLERANCE_SECONDS),
    bodyTimeoutSeconds: z.number().positive().max(60).default(DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS),
  })
  .refine(
    (webhooks) => webhooks.signingSecret === undefined || webhooks.signingSecretFile === undefined,
    { message: 'at most one of signingSecret & signingSecretFile', path: ['signingSecretFile'] },
  )
  .refine(
    (webhooks) =>
      !webhooks.enabled ||
      webhooks.signingSecret !== undefined ||
      webhooks.signingSecretFile !== undefined,
    {
      message: 'one of signingSecret & signingSecretFile is required when webhooks are enabled',
      path: ['signingSecret'],
      params: { linePath: ['webhooks', 'enabled'] },
    },
  );

/** A glob over `host/owner/name` or a branch: `*` stands for any run of characters. */
const globPattern = nonEmptyString;

/**
 * Globs with `*` a discovery list may hold: each is matched against every queue of the organization
 * at each discovery, where names without `*` are one lookup however many.
 */
export const MAX_DISCOVERY_GLOBS_WITH_STARS = 100;

const globList = z
  .array(globPattern)
  .min(1, 'expected a non-empty list')
  .refine(
    (globs) => globs.filter((glob) => glob.includes('*')).length <= MAX_DISCOVERY_GLOBS_WITH_STARS,
    `expected at most ${MAX_DISCOVERY_GLOBS_WITH_STARS} globs with * (each is matched against every queue); name more without *`,
  );

/**
 * Default `discovery.maxTargets`: more merge queues and repositories with tests than one exporter
 * polls (docs/benchmarks.md has what a queue costs), and a bound on a list that names more.
 */
export const DEFAULT_DISCOVERY_MAX_TARGETS = 10_000;

export const discoverySectionSchema = z.strictObject({
  enabled: z.boolean().default(false),
  intervalSeconds: timerSeconds.default(300),
  repos: globList.default(['*']),
  branches: globList.default(['*']),
  flakyTests: z.boolean().default(true),
  maxTargets: positiveInt.default(DEFAULT_DISCOVERY_MAX_TARGETS),
});

export const configFileSchema = z
  .strictObject({
    // prefault, not default: an absent section is parsed as {}, so each key's own default applies
    // and no default is written twice.
    trunk: trunkSectionSchema.prefault({}),
    server: z
      .strictObject({
        address: nonEmptyString.default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(9740),
        enableReload: z.boolean().default(false),
        // Well below the usual open-file limit (1,024 at the least), which the exporter also needs
        // for its connections to Trunk; a connection beyond it is closed at once.
        maxConnections: positiveInt.default(512),
        // Room for a scraper, a browser and a proxy's pool; a flood from one address leaves the
        // other clients the rest of maxConnections.
        maxConnectionsPerAddress: positiveInt.default(64),
        // A scraper keeps its connection or resumes its TLS session, but Svix may open one per
        // webhook event: room for a burst of events, while a loop of handshakes from one address
        // is held to it (docs/benchmarks.md, "TLS handshake flood", says what that costs).
        maxTlsConnectionsPerAddressPerSecond: positiveInt.default(50),
        tls: z.strictObject({ certFile: nonEmptyString, keyFile: nonEmptyString }).optional(),
        basicAuthUsers: z
          .record(z.string(), bcryptHash, { error: 'expected a map of username: bcrypt hash' })
          .optional(),
      })
      .prefault({}),
    polling: z
      .strictObject({
        mergeQueueIntervalSeconds: timerSeconds.default(30),
        flakyTestsIntervalSeconds: timerSeconds.default(300),
        pullRequestDetails: z.boolean().default(true),
        pullRequestRecheckSeconds: z.number().nonnegative().default(300),
        flakyTestDetails: z.boolean().default(true),
        staleAfterSeconds: positiveNumber.default(600),
      })
      .prefault({}),
    metrics: z
      .strictObject({
        topCodeowners: positiveInt.default(20),
        // Family names or `*` globs; checked against the families by the loader's MetricSelectionCheck.
        include: metricSelectionList.min(1, 'expected a non-empty list').optional(),
        exclude: metricSelectionList.optional(),
      })
      .prefault({}),
    // The optional API v2 reads (issue 39): each adds families and calls, and can be turned off.
    reads: z
      .strictObject({
        queueEntryHistory: z.boolean().default(true),
        verificationRuns: z.boolean().default(true),
        testMetricsPeriod: z.enum([...V2_TEST_METRICS_PERIODS, 'off']).default('7d'),
        testCollections: z.boolean().default(true),
      })
      .prefault({}),
    sharding: z
      .strictObject({
        shard: z.number().int().nonnegative().default(0),
        totalShards: positiveInt.default(1),
      })
      .prefault({}),
    webhooks: webhooksSectionSchema.prefault({}),
    // With an API key, the organization's merge queues found through API v2 (discovery/).
    discovery: discoverySectionSchema.prefault({}),
    // Empty only with discovery on (crossFieldIssues).
    targets: z.array(targetSchema, { error: 'expected a list' }).default([]),
  })
  // Run also when other fields are invalid, so that every problem is reported at once.
  .superRefine(
    (config, ctx) => {
      for (const issue of crossFieldIssues(config)) ctx.addIssue({ code: 'custom', ...issue });
    },
    { when: () => true },
  );

/** A rule between fields that failed; `linePath` is where to point when `path` is absent from the file. */
interface CrossFieldIssue {
  readonly path: PropertyKey[];
  readonly message: string;
  readonly params?: { readonly linePath: PropertyKey[] };
}

// The fields the rules read, each checked on its own: a rule runs whenever its own fields are
// valid, whatever else in the file is wrong.
const objectOrAbsent = z.record(z.string(), z.unknown()).optional().catch(undefined);
const targetKeys = z.object({ repo: repoSchema, branches: z.array(z.unknown()) });

/** The rules between fields, on a value that may be invalid elsewhere (it is read defensively). */
function crossFieldIssues(value: unknown): CrossFieldIssue[] {
  const issues: CrossFieldIssue[] = [];
  const config = objectOrAbsent.parse(value) ?? {};
  const server = objectOrAbsent.parse(config.server) ?? {};
  const targets = Array.isArray(config.targets) ? (config.targets as unknown[]) : [];
  const discovering = objectOrAbsent.parse(config.discovery)?.enabled === true;
  const isDocument = objectOrAbsent.parse(value) !== undefined;
  if (isDocument && !discovering && (config.targets === undefined || targets.length === 0)) {
    issues.push({
      path: ['targets'],
      message: 'expected a non-empty list (or discovery.enabled: true with an API key)',
    });
  }

  const firstIndex = new Map<string, number>();
  targets.forEach((raw, index) => {
    const target = targetKeys.safeParse(raw);
    if (!target.success) return;
    const repo = repoName(target.data.repo);
    for (const branch of target.data.branches) {
      if (typeof branch !== 'string' || branch === '') continue;
      // One repository however its name is cased (repositoryKey); branches are case-sensitive.
      const key = `${repositoryKey(repo)}@${branch}`;
      const seen = firstIndex.get(key);
      if (seen === undefined) firstIndex.set(key, index);
      else
        issues.push({
          path: ['targets', index, 'branches'],
          message: `duplicate target ${displayText(`${repo}@${branch}`, MAX_SHOWN_VALUE_CHARACTERS)} (already in targets[${seen}])`,
        });
    }
  });
  const sharding = configFileSchema.shape.sharding.safeParse(config.sharding);
  if (sharding.success && sharding.data.shard >= sharding.data.totalShards) {
    issues.push({
      path: ['sharding', 'shard'],
      message: `must be less than sharding.totalShards (${sharding.data.totalShards})`,
    });
  }
  const users = server.basicAuthUsers;
  if (users !== null && typeof users === 'object' && !Array.isArray(users)) {
    if (Object.keys(users).length === 0) {
      issues.push({
        path: ['server', 'basicAuthUsers'],
        message: 'expected at least one user (remove the key to turn basic auth off)',
      });
    }
    for (const username of Object.keys(users)) {
      // Basic auth sends "username:password"; a colon in the name could never match.
      if (username === '' || username.includes(':')) {
        issues.push({
          path: ['server', 'basicAuthUsers', username],
          message: 'a username must be non-empty and cannot contain ":"',
        });
      }
    }
  }
  return issues;
}

export type ConfigFile = z.infer<typeof configFileSchema>;
export type RepoSetting = ConfigFile['targets'][number]['repo'];

/** `host/owner/name` of either repo form. */
export function repoName(repo: RepoSetting): string {
  return typeof repo === 'string' ? repo : `${repo.host}/${repo.owner}/${repo.name}`;
}
