// The alert table of docs/alerts-and-dashboard.md is checked against prometheus/alerts.yaml: one
// row per alert and none for an alert that does not exist, each with the rule's severity, a line
// on what to do, and its "fires when" cell stating the rule's `for:` and every number the file
// marks `# threshold`, and the conditions the rule adds to its comparison. The page says which
// alerts name no repository and branch, and its advice fits either credential. Every alert the
// README and the pages name is one of the file's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { credentialAdviceProblems } from '../deploy/credentialAdvice.js';
import { alertingRules, RULE_FILES } from '../deploy/ruleFiles.js';
import { pagePaths, pageSection, readPage } from './pages.js';

interface Row {
  readonly alert: string;
  readonly severity: string;
  readonly firesWhen: string;
  readonly whatToDo: string;
}

function documentedAlerts(): Row[] {
  const rows: Row[] = [];
  for (const line of pageSection('docs/alerts-and-dashboard.md', '## Alerts').split('\n')) {
    const cells = line.split(' | ');
    const alert = /^\| `(\w+)`$/.exec(cells[0] ?? '')?.[1];
    if (alert !== undefined && cells.length >= 4)
      rows.push({
        alert,
        severity: cells[1] ?? '',
        firesWhen: cells[2] ?? '',
        whatToDo: cells.slice(3).join(' | ').replace(/ \|$/, ''),
      });
  }
  return rows;
}

/** The numbers each alert's rule marks `# threshold` in prometheus/alerts.yaml, by alert. */
function thresholds(): Map<string, string[]> {
  const text = readFileSync(RULE_FILES[0] ?? '', 'utf8');
  const byAlert = new Map<string, string[]>();
  for (const block of text.split(/^\s*- alert: /m).slice(1)) {
    const alert = block.split('\n')[0]?.trim() ?? '';
    const numbers = [...block.matchAll(/([\d.]+)\)?\s*# threshold/g)].map((m) => m[1] ?? '');
    byAlert.set(alert, numbers);
  }
  return byAlert;
}

/** Whether `text` has `number` as a number of its own (not inside 1800 or 0.35). */
const statesNumber = (text: string, number: string) =>
  new RegExp(`(?<![\\d.])${number.replaceAll('.', '\\.')}(?![\\d.]*\\d)`).test(text);

describe('the alert table of docs/alerts-and-dashboard.md', () => {
  const rules = alertingRules();

  it('has one row per alert of prometheus/alerts.yaml, and no other', () => {
    expect(documentedAlerts().map(({ alert }) => alert)).toEqual(rules.map(({ alert }) => alert));
  });

  it("gives each alert its rule's severity, `for:` and thresholds", () => {
    const rows = new Map(documentedAlerts().map((row) => [row.alert, row]));
    const marked = thresholds();
    for (const rule of rules) {
      const row = rows.get(rule.alert);
      expect(row?.severity, rule.alert).toBe(rule.labels?.severity);
      expect(row?.whatToDo.trim(), `${rule.alert}: what to do`).toMatch(/\w/);
      expect(
        statesNumber(row?.firesWhen ?? '', rule.for ?? ''),
        `${rule.alert}: for ${rule.for}`,
      ).toBe(true);
      for (const number of (marked.get(rule.alert) ?? []).filter((n) => Number(n) !== 0)) {
        expect(statesNumber(row?.firesWhen ?? '', number), `${rule.alert}: ${number}`).toBe(true);
      }
    }
  });

  it('states the condition an alert adds to its comparison (a testing timeout above 0)', () => {
    const rows = new Map(documentedAlerts().map((row) => [row.alert, row]));
    const guarded = rules.filter((rule) =>
      /trunk_merge_queue_testing_timeout_seconds > 0/.test(rule.expr),
    );
    expect(guarded.length).toBeGreaterThan(0);
    for (const rule of guarded)
      expect(rows.get(rule.alert)?.firesWhen, rule.alert).toMatch(/testing timeout is above 0/);
  });

  it('says which alerts list the failing targets and which name no target, as their annotations do', () => {
    const prose = pageSection('docs/alerts-and-dashboard.md', '## Alerts').replace(/\s+/g, ' ');
    const listed = (lead: string) => {
      const start = prose.indexOf(lead);
      expect(start, lead).toBeGreaterThan(-1);
      const rest = prose.slice(start + lead.length);
      return rest.slice(0, rest.indexOf('.')).split('; ').sort();
    };
    const text = (rule: (typeof rules)[number]) =>
      `${rule.annotations?.summary ?? ''} ${rule.annotations?.description ?? ''}`;
    const listing = rules.filter(
      (rule) => !/\$labels\.repo/.test(text(rule)) && /\.Labels\.repo/.test(text(rule)),
    );
    const naming = rules.filter((rule) => !/\$labels\.repo|\.Labels\.repo/.test(text(rule)));
    expect(listed('list the targets failing at that moment instead: ')).toEqual(
      listing.map(({ alert }) => alert).sort(),
    );
    expect(listed('since every repository it polls is affected: ')).toEqual(
      naming.map(({ alert }) => alert).sort(),
    );
  });

  it('names the alerts that keep firing through a failed scrape, and what Prometheus that needs', () => {
    const prose = pageSection('docs/alerts-and-dashboard.md', '## Alerts').replace(/\s+/g, ' ');
    const paragraph =
      /The alerts on a state that lasts have `keep_firing_for: (\w+)`: ([^.]*)\./.exec(prose);
    const kept = rules.filter((rule) => rule.keep_firing_for !== undefined);
    expect(kept.length).toBeGreaterThan(0);
    expect(paragraph?.[1]).toBe(kept[0]?.keep_firing_for);
    for (const rule of kept) expect(rule.keep_firing_for, rule.alert).toBe(paragraph?.[1]);
    const named = [...(paragraph?.[2] ?? '').matchAll(/`(\w+)`/g)].map((match) => match[1]);
    expect(named.sort()).toEqual(kept.map(({ alert }) => alert).sort());
    expect(prose).toMatch(/`keep_firing_for` needs Prometheus 2\.42 or later/);
  });

  it('gives advice that fits either credential', () => {
    const problems = documentedAlerts().flatMap((row) =>
      credentialAdviceProblems(row.whatToDo).map((problem) => `${row.alert}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });
});

describe('the alerts the README and docs/ name', () => {
  it('are each an alert of prometheus/alerts.yaml', () => {
    const alerts = new Set(alertingRules().map(({ alert }) => alert));
    // An alert's name is letters only; `TrunkV2Client` and the like are the code's.
    const unknown = pagePaths().flatMap((page) =>
      [...readPage(page).matchAll(/`(Trunk[A-Z][A-Za-z]+)`/g)]
        .map((match) => match[1] ?? '')
        .filter((alert) => !alerts.has(alert))
        .map((alert) => `${page}: ${alert}`),
    );
    expect(unknown).toEqual([]);
  });
});
