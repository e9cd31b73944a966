import type { Sharding } from '../sharding/shardAssignment.js';
import type { RepoRef } from '../trunk/schemas.js';
import type { V2TestMetricsPeriod } from '../trunk/v2Schemas.js';
import type { Secret } from '../secrets/secret.js';

/** One repository to poll, normalized from either config form. */
export interface RepositoryTarget {
  readonly repo: RepoRef;
  /** `host/owner/name`, the `repo` label value. */
  readonly name: string;
  readonly branches: readonly string[];
  readonly flakyTests: boolean;
  /** What discovery added to this repository rather than the file (discovery/). */
  readonly discovered?: {
    readonly branches: ReadonlySet<string>;
    readonly flakyTests: boolean;
  };
}

/** The server's certificate and key, as read (and checked to match) when the config was loaded. */
export interface ServerTls {
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM certificate chain. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: Secret;
}

/** `discovery`: which of the organization's merge queues become targets, and how often to look. */
export interface DiscoverySettings {
  readonly enabled: boolean;
  readonly intervalSeconds: number;
  /** Globs over `host/owner/name`; `*` stands for any run of characters. */
  readonly repos: readonly string[];
  /** Globs over the target branch. */
  readonly branches: readonly string[];
  /** Each discovered repository's quarantine list becomes a target too. */
  readonly flakyTests: boolean;
  /** Discovered targets (merge queues and quarantine lists) at most; the rest are left out. */
  readonly maxTargets: number;
}

/** The validated, normalized configuration the rest of the program runs from. */
export interface ExporterConfig {
  readonly trunk: {
    /** The API's host (and any path prefix), without a trailing slash or version segment. */
    readonly apiUrl: string;
    /** The API v1 organization token; at least one of token and apiKey is set. */
    readonly token: Secret | undefined;
    /** Where the token was read from, when it came from a file. */
    readonly tokenFile?: string | undefined;
    /** The API v2 key (read-only is enough); with it, merge queues are read through API v2. */
    readonly apiKey?: Secret | undefined;
    /** Where the API key was read from, when it came from a file. */
    readonly apiKeyFile?: string | undefined;
    readonly orgUrlSlug: string | undefined;
    readonly timeoutSeconds: number;
    readonly maxConcurrentRequests: number;
    readonly maxRequestsPerSecond: number;
    /** Largest 2xx body read from the API; undefined: the client's default (32 MiB). */
    readonly maxResponseBytes?: number | undefined;
  };
  readonly server: {
    readonly address: string;
    readonly port: number;
    /** Whether `POST /-/reload` reloads the configuration (SIGHUP always does). */
    readonly enableReload: boolean;
    /** Connections the HTTP server holds at once; a newcomer beyond takes the place of the one waiting longest. */
    readonly maxConnections: number;
    /** Connections held at once from one client address; beyond, as maxConnections, within that address. */
    readonly maxConnectionsPerAddress: number;
    /** New TLS connections one client address may open a second (a burst of twice that); more are closed. */
    readonly maxTlsConnectionsPerAddressPerSecond: number;
    /** HTTPS instead of HTTP when set. */
    readonly tls: ServerTls | undefined;
    /** Username → bcrypt hash; empty when basic auth is off. */
    readonly basicAuthUsers: ReadonlyMap<string, string>;
  };
  readonly polling: {
    readonly mergeQueueIntervalSeconds: number;
    readonly flakyTestsIntervalSeconds: number;
    readonly pullRequestDetails: boolean;
    /** An unchanged PR is looked up again at most this often (0: every poll). */
    readonly pullRequestRecheckSeconds: number;
    /** Walk every quarantine page (per-owner counts, oldest quarantine) rather than read the total. */
    readonly flakyTestDetails: boolean;
    readonly staleAfterSeconds: number;
  };
  readonly metrics: {
    readonly topCodeowners: number;
    /** Family names or `*` globs to keep; unset keeps every family. */
    readonly include?: readonly string[] | undefined;
    /** Family names or `*` globs to drop (self-health families stay). */
    readonly exclude?: readonly string[] | undefined;
  };
  /** Trunk's webhooks (through Svix), received at `POST path` on the metrics server. */
  readonly webhooks: {
    readonly enabled: boolean;
    /** Absolute path of the endpoint, e.g. `/webhooks/trunk`; never one of the exporter's own. */
    readonly path: string;
    /** The Svix signing secret (`whsec_…`); set whenever `enabled` is. */
    readonly signingSecret: Secret | undefined;
    /** Where the secret was read from, when it came from a file. */
    readonly signingSecretFile?: string | undefined;
    /** How far `svix-timestamp` may be from now, in seconds (at most 300). */
    readonly toleranceSeconds: number;
    /** How long a request may take to send its body, in seconds (then 408). */
    readonly bodyTimeoutSeconds: number;
  };
  /** The organization's merge queues found through API v2 (needs an API key). */
  readonly discovery?: DiscoverySettings | undefined;
  /** The optional API v2 reads (issue 39), each on unless turned off. */
  readonly reads: {
    /** Queue-entry histories: failures, cancellations and restarts by reason, transitions between polls. */
    readonly queueEntryHistory: boolean;
    /** Read each queue's verification runs (the run, slot, batch and check-failure families). */
    readonly verificationRuns: boolean;
    /** The window of the per-test metrics the flaky and broken tests are read with; `off`: none. */
    readonly testMetricsPeriod: V2TestMetricsPeriod | 'off';
    /** Read the organization's test collections once per flakyTestsIntervalSeconds. */
    readonly testCollections: boolean;
  };
  /** Which share of the targets this instance polls. */
  readonly sharding: Sharding;
  readonly targets: readonly RepositoryTarget[];
  /** What the file asks for that works but should change (one `warn` line each at load). */
  readonly warnings?: readonly string[] | undefined;
}
