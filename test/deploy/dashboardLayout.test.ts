// The dashboard as a reader meets it: settings shown in their units, legends that leave narrow
// panels their graph, and a docs page that names every panel.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pageSection } from '../docs/pages.js';
import { DASHBOARD_FILE } from './dashboardQueries.js';

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly gridPos: {
    readonly x: number;
    readonly y: number;
    readonly w: number;
    readonly h: number;
  };
  readonly options?: {
    readonly legend?: { readonly placement?: string; readonly showLegend?: boolean };
  };
  readonly fieldConfig?: {
    readonly overrides?: readonly {
      readonly matcher: { readonly id: string; readonly options: string };
      readonly properties: readonly { readonly id: string; readonly value: unknown }[];
    }[];
  };
  readonly transformations?: readonly {
    readonly id: string;
    readonly options: { readonly renameByName?: Readonly<Record<string, string>> };
  }[];
}

const panels = (JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[] }).panels;

function panel(title: string): Panel {
  const found = panels.find((candidate) => candidate.title === title);
  if (found === undefined) throw new Error(`no panel ${title}`);
  return found;
}

/** Grafana's duration units: seconds shown as "1 hour", and the clock-style variants. */
const DURATION_UNITS = ['s', 'dtdurations', 'dthms'];

describe('Grafana dashboard layout', () => {
  it('shows the queue settings that are durations with a duration unit', () => {
    const settings = panel('Queue settings');
    const renamed = Object.values(
      settings.transformations?.find((step) => step.id === 'organize')?.options.renameByName ?? {},
    );
    for (const column of ['testing timeout', 'batching max wait']) {
      // The override matches the column's name after the organize step renamed it.
      expect(renamed).toContain(column);
      const override = settings.fieldConfig?.overrides?.find(
        (candidate) => candidate.matcher.id === 'byName' && candidate.matcher.options === column,
      );
      const unit = override?.properties.find((property) => property.id === 'unit')?.value;
      expect(DURATION_UNITS, column).toContain(unit);
    }
  });

  it('puts the legend of every panel a third of the width or narrower below the graph', () => {
    const narrow = panels.filter(
      (candidate) =>
        candidate.type === 'timeseries' &&
        candidate.gridPos.w <= 8 &&
        candidate.options?.legend?.showLegend === true,
    );
    expect(narrow.length).toBeGreaterThan(0);
    for (const candidate of narrow) {
      expect(candidate.options?.legend?.placement, candidate.title).toBe('bottom');
    }
  });

  it('gives no two panels the same place on the grid', () => {
    // Grafana pushes an overlapping panel down on load, out of the row its place puts it in.
    const overlapping = panels.flatMap((one, index) =>
      panels
        .slice(index + 1)
        .filter(
          (other) =>
            one.gridPos.x < other.gridPos.x + other.gridPos.w &&
            other.gridPos.x < one.gridPos.x + one.gridPos.w &&
            one.gridPos.y < other.gridPos.y + other.gridPos.h &&
            other.gridPos.y < one.gridPos.y + one.gridPos.h,
        )
        .map((other) => `${one.title} / ${other.title}`),
    );
    expect(overlapping).toEqual([]);
  });

  it('names every row and panel in the dashboard section of docs/alerts-and-dashboard.md', () => {
    const section = pageSection('docs/alerts-and-dashboard.md', '## Grafana dashboard');
    // Line breaks in the page's prose are spaces to a reader.
    const prose = section.replace(/\s+/g, ' ');
    for (const { title } of panels) expect(prose, title).toContain(title);
  });
});
