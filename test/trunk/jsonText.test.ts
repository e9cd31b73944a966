import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/trunk/jsonText.js';

// A JSON string may escape half a surrogate pair, which UTF-8 cannot encode: the exporter reads it
// as U+FFFD, the character the page would write for it, so names differing only there are one.
describe('parseJson', () => {
  it.each([
    ['a lone high surrogate', String.raw`{"name":"a\uD800b"}`, { name: 'a\uFFFDb' }],
    ['a lone low surrogate', String.raw`{"name":"a\udc00b"}`, { name: 'a\uFFFDb' }],
    ['a lone high surrogate at the end', String.raw`{"name":"ab\uDBFF"}`, { name: 'ab\uFFFD' }],
    ['a pair the wrong way round', String.raw`{"name":"\uDE80\uD83D"}`, { name: '\uFFFD\uFFFD' }],
    [
      'a high surrogate before another escape',
      String.raw`{"name":"\uD83D\u0041"}`,
      { name: '\uFFFDA' },
    ],
    ['one nested in an array', String.raw`["ok",{"a":["\uD800"]}]`, ['ok', { a: ['\uFFFD'] }]],
    ['a string alone', String.raw`"\uDFFF"`, '\uFFFD'],
    [
      'one after the text of an escape',
      String.raw`{"name":"\\uD800\uDC00"}`,
      { name: String.raw`\uD800` + '\uFFFD' },
    ],
  ])('reads %s as U+FFFD', (_case, json, parsed) => {
    expect(parseJson(json)).toEqual(parsed);
  });

  it('reads one nested deeper than the call stack goes', () => {
    const depth = 100_000;
    let value = parseJson(`${'['.repeat(depth)}"\\uD800"${']'.repeat(depth)}`);
    for (let level = 0; level < depth; level++) value = (value as unknown[])[0];
    expect(value).toBe('\uFFFD');
  });

  it.each([
    ['an escaped pair', String.raw`{"name":"\uD83D\uDE80"}`, { name: '🚀' }],
    ['a pair as UTF-8', '{"name":"🚀"}', { name: '🚀' }],
    ['an escaped backslash before u', String.raw`{"name":"\\uD800"}`, { name: String.raw`\uD800` }],
  ])('keeps %s', (_case, json, parsed) => {
    expect(parseJson(json)).toEqual(parsed);
  });
});
