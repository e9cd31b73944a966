import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip } from '../../src/server/contentEncoding.js';
import { parseExposition } from '../support/exposition.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';
import { promtoolCheckMetrics } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';

describe('acceptsGzip', () => {
  it.each([
    ['no header', undefined, false],
    ['empty header', '', false],
    ['Prometheus', 'gzip', true],
    ['curl --compressed', 'deflate, gzip, br, zstd', true],
    ['upper case with q', 'GZIP;q=0.5', true],
    ['refused with q=0', 'gzip;q=0', false],
    ['refused with q=0.0 and spaces', 'gzip ; q = 0.0', false],
    ['wildcard', '*', true],
    ['wildcard but gzip refused', '*, gzip;q=0', false],
    ['identity only', 'identity', false],
    ['x-gzip', 'x-gzip', true],
    ['unparsable q', 'gzip;q=abc', false],
  ] as const)('%s → %s', (_name, header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

/** A raw GET (fetch would decompress behind our back), returning the bytes as sent. */
function get(
  url: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ headers: response.headers, body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics content encoding', () => {
  async function startPolledExporter() {
    const { simulator } = await startFrozenSimulator();
    const harness = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: '  - repo: github.com/acme/web\n    branches: [main]\n    flakyTests: true',
      }),
    );
    await harness.waitUntilReady();
    return `${harness.exporter.url}/metrics`;
  }

  it('sends gzip only to a scraper that accepts it, and the same page either way', async () => {
    const url = await startPolledExporter();
    const plain = await get(url, {});
    const refused = await get(url, { 'accept-encoding': 'gzip;q=0' });
    const gzipped = await get(url, { 'accept-encoding': 'gzip' });

    for (const response of [plain, refused]) {
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.body.subarray(0, 2).toString()).toBe('# ');
    }
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toBe('Accept, Accept-Encoding');
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length);
    expect(gzipped.body.length).toBeLessThan(plain.body.length);

    // Process metrics move between scrapes; the series, and every data value, must not. Except the
    // garbage collector's: a kind of collection gets its series when it first runs.
    const unzipped = gunzipSync(gzipped.body).toString('utf8');
    const series = (page: string) =>
      parseExposition(page)
        .filter(({ name }) => !name.startsWith('nodejs_gc_duration_seconds'))
        .map(({ name, labels, value }) =>
          /^(process|nodejs)_/.test(name)
            ? `${name}${JSON.stringify(labels)}`
            : `${name}${JSON.stringify(labels)} ${value}`,
        );
    expect(series(unzipped)).toEqual(series(plain.body.toString('utf8')));
  });

  it('answers HEAD with the headers and no body', async () => {
    const url = await startPolledExporter();
    const head = await get(url, { 'accept-encoding': 'gzip' }, 'HEAD');
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.body.length).toBe(0);
  });

  it('serves a gzip page that decompresses to one promtool accepts', async () => {
    const promtool = findSystemBinary('promtool', 'prometheus');
    if (promtool === undefined) return;
    const url = await startPolledExporter();
    const gzipped = await get(url, { 'accept-encoding': 'gzip' });
    const result = await promtoolCheckMetrics(promtool, gunzipSync(gzipped.body).toString('utf8'));
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});
