// The rules between the credentials and the other settings: discovery needs an API v2 key, and a
// quarantine list read through API v1 needs `trunk.orgUrlSlug`. They go by which credentials are
// set, not by whether they could be read, so they are reported beside an unreadable token file.
import type { ResolvedCredentials } from './credentials.js';
import { API_KEY_ENVIRONMENT_VARIABLE } from './credentials.js';
import { isRecord, sectionOf } from './fileValue.js';

/** A rule broken: where (as written in the file), what, and where to point when `path` is absent. */
export interface CredentialRuleProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly linePath: readonly PropertyKey[];
}

/** Every rule between the credentials set and the rest of the (possibly invalid) file that fails. */
export function credentialRuleProblems(
  value: unknown,
  configured: ResolvedCredentials['configured'],
): CredentialRuleProblem[] {
  const problems: CredentialRuleProblem[] = [];
  const discovery = sectionOf(value, 'discovery');
  if (!configured.apiKey && discovery?.enabled === true) {
    problems.push({
      path: ['discovery', 'enabled'],
      message: `needs an API v2 key (trunk.apiKey, trunk.apiKeyFile or the ${API_KEY_ENVIRONMENT_VARIABLE} environment variable): discovery lists merge queues through API v2`,
      linePath: ['discovery', 'enabled'],
    });
  }
  // With no credential at all, an API key (which needs no slug) may be the fix: that problem says so.
  if (configured.token && !configured.apiKey) {
    const index = firstFlakyTestsTarget(value);
    if (index !== undefined && sectionOf(value, 'trunk')?.orgUrlSlug === undefined) {
      problems.push({
        path: ['trunk', 'orgUrlSlug'],
        message: 'required when any target has flakyTests: true and no API key is set',
        linePath: ['targets', index, 'flakyTests'],
      });
    }
  }
  return problems;
}

/** The index of the first target with `flakyTests: true`, if any. */
function firstFlakyTestsTarget(value: unknown): number | undefined {
  const targets = isRecord(value) ? value.targets : undefined;
  if (!Array.isArray(targets)) return undefined;
  const index = targets.findIndex(
    (target: unknown) => isRecord(target) && target.flakyTests === true,
  );
  return index < 0 ? undefined : index;
}
