// Gzip members as the page sends them: whatever mix of members a page holds, a gzip reader must
// read back exactly the text, as Prometheus's reader takes a stream of members as one text.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipMember, storedGzipMember } from '../../src/metrics/pageBytes.js';

const LINE = 'trunk_exporter_api_requests_total{endpoint="getQueue",status="200"} 12\n';

describe('storedGzipMember', () => {
  it.each([
    ['empty', ''],
    ['one line', LINE],
    ['non-ASCII text', '# HELP x Zürich ✓\n'],
    ['exactly one full stored block', 'a'.repeat(0xffff)],
    ['more than one stored block', LINE.repeat(2_000)],
  ])('reads back as the text: %s', (_name, text) => {
    expect(gunzipSync(storedGzipMember(text)).toString()).toBe(text);
  });

  it('is the text and a fixed overhead: 18 bytes of header and trailer, 5 per 65,535-byte block', () => {
    const text = LINE.repeat(2_000);
    const bytes = Buffer.byteLength(text);
    expect(storedGzipMember(text).length).toBe(18 + 5 * Math.ceil(bytes / 0xffff) + bytes);
  });

  it('reads back as one text among compressed members', () => {
    const page = Buffer.concat([
      gzipMember('# TYPE a gauge\n'),
      storedGzipMember(LINE),
      gzipMember('# EOF\n'),
    ]);
    expect(gunzipSync(page).toString()).toBe(`# TYPE a gauge\n${LINE}# EOF\n`);
  });
});
