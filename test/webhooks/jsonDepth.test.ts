import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/webhooks/jsonDepth.js';

const nested = (depth: number, open = '[', close = ']') =>
  Buffer.from(`${open.repeat(depth)}${close.repeat(depth)}`);

describe('nestsDeeperThan', () => {
  it('allows the fixed depth and refuses one level more, arrays or objects', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(nestsDeeperThan(Buffer.from(objects))).toBe(true);
  });

  it('counts no bracket inside a string, escaped quotes included', () => {
    const text = JSON.stringify({ text: `\\"${'['.repeat(1000)}`, more: '"{{{{' });
    expect(nestsDeeperThan(Buffer.from(text))).toBe(false);
  });

  it('scans siblings as siblings: depth goes down again after each', () => {
    const siblings = `[${Array.from({ length: 100 }, () => '[[[]]]').join(',')}]`;
    expect(nestsDeeperThan(Buffer.from(siblings), 4)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(siblings), 3)).toBe(true);
  });
});
