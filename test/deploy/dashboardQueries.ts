// Reads the Grafana dashboard's panel queries and template variables, and fills in variables the way
// Grafana's Prometheus data source does, so the test runs the queries Grafana would send.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './ruleFiles.js';

export const DASHBOARD_FILE = join(ROOT, 'grafana', 'trunk-merge-queue.json');

interface DataSourceRef {
  readonly type?: string;
  readonly uid?: string;
}
interface DashboardTarget {
  readonly refId: string;
  readonly expr: string;
  readonly instant?: boolean;
  readonly exemplar?: boolean;
  readonly datasource?: DataSourceRef;
}
interface DashboardPanel {
  readonly type: string;
  readonly title: string;
  readonly datasource?: DataSourceRef;
  readonly targets?: readonly DashboardTarget[];
  readonly panels?: readonly DashboardPanel[];
}
/** A template variable of the dashboard. */
export interface TemplateVariable {
  readonly name: string;
  readonly type: string;
  readonly query: string | { readonly query: string };
  readonly datasource?: DataSourceRef;
}
/** The parts of a Grafana dashboard the test reads. */
export interface Dashboard {
  readonly panels: readonly DashboardPanel[];
  readonly templating: { readonly list: readonly TemplateVariable[] };
}

/** One query of one panel. */
export interface PanelQuery {
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
  readonly instant: boolean;
  /** Grafana asks Prometheus for the exemplars of the series the query selects, too. */
  readonly exemplar: boolean;
  readonly panelDataSource: DataSourceRef | undefined;
  readonly dataSource: DataSourceRef | undefined;
}

/** Reads the dashboard file. */
export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every query of every panel, rows' nested panels included. */
export function panelQueries(dashboard: Dashboard): PanelQuery[] {
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      refId: target.refId,
      expr: target.expr,
      instant: target.instant === true,
      exemplar: target.exemplar === true,
      panelDataSource: panel.datasource,
      dataSource: target.datasource,
    })),
  );
}

/** Titles of the panels that show data (rows excluded). */
export function dataPanelTitles(dashboard: Dashboard): string[] {
  return dashboard.panels
    .flatMap((panel) => [panel, ...(panel.panels ?? [])])
    .filter((panel) => panel.type !== 'row')
    .map((panel) => panel.title);
}

/** `label_values(selector, label)` of a query variable, split into its parts. */
export function labelValuesQuery(variable: TemplateVariable): { selector: string; label: string } {
  const text = typeof variable.query === 'string' ? variable.query : variable.query.query;
  const match = /^label_values\((.+),\s*(\w+)\)$/s.exec(text.trim());
  if (!match?.[1] || !match[2]) {
    throw new Error(
      `variable ${variable.name}: expected label_values(selector, label), got ${text}`,
    );
  }
  return { selector: match[1], label: match[2] };
}

/** A value as Grafana writes it into a Prometheus regex matcher: special characters escaped. */
function regexEscape(value: string): string {
  return value.replace(/[$^*{}[\]'+?.()|\\]/g, '\\\\$&');
}

/** Grafana's "All" of a multi-value variable without a custom all value: `(a|b|c)`, escaped. */
export function allValuesRegex(values: readonly string[]): string {
  return `(${values.map(regexEscape).join('|')})`;
}

/** Replaces `$name` and `${name}` from `values`; a variable with no value is an error. */
export function substituteVariables(
  expr: string,
  values: Readonly<Record<string, string>>,
): string {
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (_all, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    const value = values[name];
    if (value === undefined) throw new Error(`unknown variable $${name} in ${expr}`);
    return value;
  });
}
