// Verification runs as Trunk's definition shapes them, for fakes of
// `GET /v2/merge-queues/{id}/verification-runs`: the fixture's run with the fields a test moves.
import { fixtureAt } from './fakeTrunkV2.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** What a test says of a run; times in unix seconds. */
export interface RunShape {
  readonly id: string;
  readonly status: string;
  readonly isBisection?: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly tested: readonly number[];
  /** The fixture's checks (build passes; e2e twice, unit, lint and preview fail) unless given. */
  readonly checks?: readonly unknown[];
  /** The fixture's required checks unless given. */
  readonly requiredStatuses?: readonly string[];
}

/** A run shaped as the fixture (a `VerificationRun` with every field the definition has). */
export function run(shape: RunShape): { createdAt: string } & Record<string, unknown> {
  const template = fixtureAt('verification-run-failed-on-a-required-check.json') as Record<
    string,
    unknown
  > & { testedPullRequests: Record<string, unknown>[] };
  const [pr] = template.testedPullRequests;
  return {
    ...template,
    id: shape.id,
    status: shape.status,
    isBisection: shape.isBisection ?? false,
    createdAt: iso(shape.createdAt),
    updatedAt: iso(shape.updatedAt),
    testedPullRequests: shape.tested.map((number) => ({ ...pr, number })),
    ...(shape.checks === undefined ? {} : { checks: shape.checks }),
    ...(shape.requiredStatuses === undefined ? {} : { requiredStatuses: shape.requiredStatuses }),
  };
}

/** A completed check of a run (`VerificationRunCheck`) named `name` that concluded `conclusion`. */
export function checkRow(name: string, conclusion: string): Record<string, unknown> {
  return {
    id: `check-${name}`,
    name,
    kind: 'checkRun',
    status: 'completed',
    conclusion,
    url: null,
    provider: 'github',
  };
}
