import { describe, expect, it } from 'vitest';
import { LiveConfig } from '../../src/config/liveConfig.js';
import type { ExporterConfig } from '../../src/config/types.js';
import { exporterConfig } from '../support/exporterConfig.js';

const withInterval = (seconds: number): ExporterConfig =>
  exporterConfig('http://127.0.0.1:1', [], { polling: { mergeQueueIntervalSeconds: seconds } });

const interval = (config: ExporterConfig) => config.polling.mergeQueueIntervalSeconds;

describe('LiveConfig', () => {
  it('applies the current configuration to a step as it subscribes', () => {
    const live = new LiveConfig(withInterval(30));
    const seen: string[] = [];
    live.subscribe((next, previous) => seen.push(`${interval(previous)}→${interval(next)}`));
    expect(seen).toEqual(['30→30']);
  });

  it('runs the steps in subscription order, each with the previous configuration, then makes the next one current', () => {
    const live = new LiveConfig(withInterval(30));
    const seen: string[] = [];
    live.subscribe((next, previous) => {
      seen.push(`first ${interval(previous)}→${interval(next)} current ${interval(live.current)}`);
    });
    live.subscribe((next, previous) => {
      seen.push(`second ${interval(previous)}→${interval(next)} current ${interval(live.current)}`);
    });
    seen.length = 0;
    live.update(withInterval(60));
    expect(seen).toEqual(['first 30→60 current 30', 'second 30→60 current 30']);
    expect(interval(live.current)).toBe(60);
  });

  it('keeps the old configuration when a step fails, and later steps never see the new one', () => {
    const live = new LiveConfig(withInterval(30));
    const later: number[] = [];
    live.subscribe((next) => {
      if (interval(next) === 5) throw new Error('5 s is too short for this step');
    });
    live.subscribe((next) => later.push(interval(next)));
    expect(() => {
      live.update(withInterval(5));
    }).toThrow('5 s is too short for this step');
    expect(interval(live.current)).toBe(30);
    expect(later).toEqual([30]);
    live.update(withInterval(60));
    expect(later).toEqual([30, 60]);
    expect(interval(live.current)).toBe(60);
  });
});
