// Word lists the simulated world draws names from. Plausible values make the demo readable and
// exercise the exporter with realistic lengths and characters.
import type { Random } from './random.js';

const AUTHORS = [
  'alice-ng',
  'bmartins',
  'chen-wei',
  'dana.k',
  'eoin-obrien',
  'fatima-z',
  'gkowalski',
  'hiro-tanaka',
  'isabel-ruiz',
  'jpetrov',
  'kwame-a',
  'lena-schmidt',
  'mo-hassan',
  'nora-lindqvist',
  'oscar-dev',
  'priya-r',
  'renovate[bot]',
  'dependabot[bot]',
] as const;

const VERBS = ['Fix', 'Add', 'Remove', 'Refactor', 'Speed up', 'Harden', 'Document', 'Bump'];
const AREAS = [
  'checkout',
  'billing',
  'auth',
  'search',
  'notifications',
  'onboarding',
  'settings',
  'feature flags',
  'rate limiter',
  'cache',
  'CI pipeline',
  'build',
];
const THINGS = [
  'retry logic',
  'error handling',
  'flaky test',
  'database migration',
  'logging',
  'metrics',
  'API client',
  'pagination',
  'dark mode',
  'timeout handling',
  'dependency versions',
  'input validation',
];

/** An author login for a new pull request. */
export function pickAuthor(random: Random): string {
  return random.pick(AUTHORS);
}

/** Whether a login is a bot's (GitHub's `[bot]` suffix). */
export function isBot(login: string): boolean {
  return login.endsWith('[bot]');
}

const PEOPLE = AUTHORS.filter((login) => !isBot(login));

/** A person's login: someone who restarts, cancels or submits by hand. */
export function pickPerson(random: Random): string {
  return random.pick(PEOPLE);
}

/** A pull request title such as "Fix checkout retry logic". */
export function pickPullRequestTitle(random: Random): string {
  const title = `${random.pick(VERBS)} ${random.pick(AREAS)} ${random.pick(THINGS)}`;
  return random.chance(0.1) ? `${title} (#${random.int(100, 999)} follow-up)` : title;
}

/** How a repository's test framework names its tests, which decides which fields can be null. */
export type TestStyle = 'jest' | 'go' | 'junit';

/** The test style of the repository at `index`: rotates so the defaults cover all three. */
export function testStyleFor(index: number): TestStyle {
  const styles: readonly TestStyle[] = ['jest', 'go', 'junit'];
  return styles[index % styles.length] ?? 'jest';
}

/** Teams per test style; prefixed with `@<owner>/` to form a code owner. */
const TEAMS_BY_STYLE: Readonly<Record<TestStyle, readonly string[]>> = {
  jest: ['web-team', 'design-system', 'platform'],
  go: ['platform', 'payments', 'web-team'],
  junit: ['mobile', 'platform'],
};

/** Variants per test style; the empty string (no variant) is the common case. */
export const VARIANTS_BY_STYLE: Readonly<Record<TestStyle, readonly string[]>> = {
  jest: ['chromium', 'firefox', 'webkit'],
  go: ['race', 'integration'],
  junit: ['api-28', 'api-34', 'tablet'],
};

/** Code owners of a new test: usually one team, sometimes two, now and then none. */
function drawCodeowners(random: Random, teams: readonly string[]): readonly string[] {
  const roll = random.next();
  if (roll < 0.12) return [];
  const first = random.pick(teams);
  if (roll > 0.85) {
    const second = random.pick(teams.filter((team) => team !== first));
    return [first, second];
  }
  return [first];
}

/** A variant: usually none (the empty string), else one of the style's. */
function drawVariant(random: Random, style: TestStyle): string {
  return random.chance(0.75) ? '' : random.pick(VARIANTS_BY_STYLE[style]);
}

const MODULES = ['cart', 'payment', 'session', 'profile', 'search', 'inbox', 'invoice', 'upload'];
const BEHAVIOURS = [
  'handles empty input',
  'retries on timeout',
  'renders loading state',
  'rejects expired token',
  'keeps order stable',
  'survives reconnect',
  'applies discount',
  'paginates results',
  'debounces input',
  'cleans up listeners',
];

/** The identifying fields of one generated test case, in the style of its framework. */
export interface TestIdentity {
  readonly name: string;
  readonly parent: string | null;
  readonly file: string | null;
  readonly classname: string | null;
}

/** A test case as Trunk lists it: its identity, id, code owners and variant. */
export interface TestCase extends TestIdentity {
  readonly testCaseId: string;
  readonly codeowners: readonly string[];
  readonly variant: string;
}

/** The code owners (`@owner/team`) that tests of `style` in a repository of `owner` have. */
export function codeownerTeams(style: TestStyle, owner: string): readonly string[] {
  return TEAMS_BY_STYLE[style].map((team) => `@${owner}/${team}`);
}

/** A new test case's id, code owners (of `teams`) and variant, drawn in that order. */
export function drawTestCaseFields(
  random: Random,
  style: TestStyle,
  teams: readonly string[],
): Omit<TestCase, keyof TestIdentity> {
  return {
    testCaseId: random.uuid(),
    codeowners: drawCodeowners(random, teams),
    variant: drawVariant(random, style),
  };
}

/** A test name, parent, file and class name as the given framework would report them. */
export function pickTestIdentity(random: Random, style: TestStyle): TestIdentity {
  const module = random.pick(MODULES);
  const behaviour = random.pick(BEHAVIOURS);
  const suffix = random.int(1, 99);
  switch (style) {
    case 'jest': {
      const component = `${module.charAt(0).toUpperCase()}${module.slice(1)}View`;
      return {
        name: `${behaviour} #${suffix}`,
        parent: `${component} > ${random.pick(['mount', 'update', 'submit', 'error path'])}`,
        file: `src/components/${component}.test.tsx`,
        // Jest has no classes; the live service reports null, sometimes an empty string.
        classname: random.chance(0.8) ? null : '',
      };
    }
    case 'go': {
      const camel = behaviour.replace(/ (\w)/g, (_match, letter: string) => letter.toUpperCase());
      return {
        name: `Test${module.charAt(0).toUpperCase()}${module.slice(1)}/${camel}_${suffix}`,
        parent: `internal/${module}`,
        file: random.chance(0.9) ? `internal/${module}/${module}_test.go` : null,
        classname: null,
      };
    }
    case 'junit': {
      const className = `${module.charAt(0).toUpperCase()}${module.slice(1)}ViewModelTest`;
      const method = behaviour.replace(/ (\w)/g, (_match, letter: string) => letter.toUpperCase());
      return {
        name: `${method}${suffix}`,
        parent: random.chance(0.7) ? `com.acme.mobile.${module}` : null,
        file: `app/src/test/java/com/acme/mobile/${module}/${className}.kt`,
        classname: `com.acme.mobile.${module}.${className}`,
      };
    }
  }
}
