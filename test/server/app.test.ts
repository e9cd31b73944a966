import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import type { Logger } from '../../src/log/logger.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { startHttpServer } from '../../src/server/index.js';
import type { ConnectionLimits, RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { FlakyTestsSnapshot, Target } from '../../src/snapshot/types.js';
import { createTestHttpApp } from '../support/httpApp.js';

const NOW = 1_767_225_600;
const HOSTILE_REPO = 'github.com/acme/<script>alert("repo")</script>';
const QUEUE: Target = { kind: 'merge_queue', repo: HOSTILE_REPO, branch: 'main' };
const FLAKY: Target = { kind: 'flaky_tests', repo: 'github.com/acme/widgets', branch: '' };
const HOSTILE_ERROR = `getQueue: HTTP 500 <script>alert('error')</script> & "more"`;

let running: RunningHttpServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

interface Fixture {
  readonly url: string;
  readonly store: SnapshotStore;
  readonly registry: Registry;
  readonly setClock: (seconds: number) => void;
}

async function startApp(
  options: { logger?: Logger; registry?: Registry; limits?: Partial<ConnectionLimits> } = {},
): Promise<Fixture> {
  let clock = NOW;
  const store = new SnapshotStore(600, () => clock);
  store.setTargets([QUEUE, FLAKY]);
  const { app, registry } = createTestHttpApp({
    store,
    ...(options.registry && { registry: options.registry }),
    ...(options.logger && { logger: options.logger }),
    now: () => clock,
  });
  running = await startHttpServer(app, '127.0.0.1', 0, undefined, options.limits);
  return {
    url: running.url,
    store,
    registry,
    setClock: (seconds) => {
      clock = seconds;
    },
  };
}

function flakySnapshot(at: number): FlakyTestsSnapshot {
  return {
    kind: 'flaky_tests',
    repo: FLAKY.repo,
    takenAt: at,
    quarantine: {
      count: 3,
      byCodeowner: new Map([['@acme/web', 3]]),
      oldestQuarantinedAt: undefined,
      quarantinedRecently: new Map(),
      quarantinedOlderThan: new Map(),
    },
  };
}

describe('startHttpServer', () => {
  it('binds port 0 to a free port and reports its URL', async () => {
    const { url } = await startApp();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
  });

  it('closes while a client holds a keep-alive connection', async () => {
    const { url } = await startApp();
    await (await fetch(`${url}/healthz`)).text();
    const server = running;
    running = undefined;
    await server?.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe('/healthz', () => {
  it('answers ok while the process runs, polled or not', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('ok\n');
  });
});

describe('/readyz', () => {
  it('is 503 with Retry-After until every target has been polled once, then 200', async () => {
    const { url, store } = await startApp();

    const before = await fetch(`${url}/readyz`);
    expect(before.status).toBe(503);
    expect(before.headers.get('retry-after')).toBe('5');
    expect(await before.text()).toBe(
      'not ready: 2 of 2 targets still waiting for their first poll\n',
    );

    store.recordFailure(QUEUE, 'boom', 1);
    const half = await fetch(`${url}/readyz`);
    expect(half.status).toBe(503);
    expect(await half.text()).toContain('1 of 2 targets');

    // A failed first poll counts: readiness means "has tried", not "Trunk is healthy".
    store.recordSuccess(FLAKY, flakySnapshot(NOW), 0.5);
    const after = await fetch(`${url}/readyz`);
    expect(after.status).toBe(200);
    expect(after.headers.get('retry-after')).toBeNull();
    expect(await after.text()).toBe('ready\n');
  });
});

describe('landing page', () => {
  it('escapes repository names and error messages', async () => {
    const { url, store } = await startApp();
    store.recordFailure(QUEUE, HOSTILE_ERROR, 1);
    const body = await (await fetch(`${url}/`)).text();

    expect(body).not.toContain('<script>');
    expect(body).toContain('github.com/acme/&lt;script&gt;alert(&quot;repo&quot;)&lt;/script&gt;');
    // Without basic auth the error's text stays off the page (test/server/landingPage.test.ts).
    expect(body).toContain('poll failed (details in the exporter&#39;s log)');
  });

  it('shows version, links and each target with its last poll and the age of its last success', async () => {
    const { url, store, setClock } = await startApp();
    store.recordSuccess(FLAKY, flakySnapshot(NOW), 0.5);
    setClock(NOW + 12);
    const body = await (await fetch(`${url}/`)).text();

    expect(body).toContain('trunk-exporter <small>9.9.9-test</small>');
    for (const path of ['metrics', 'healthz', 'readyz']) {
      expect(body).toContain(`<a href="./${path}">/${path}</a>`);
    }
    expect(body).toContain('Merge queues are polled every 30s, quarantine lists every 5m.');
    expect(body).toContain('<span class="pending">pending</span></td><td>never</td>');
    expect(body).toContain(
      '<td><code>github.com/acme/widgets</code></td><td class="number">3</td>' +
        '<td><span class="up">up</span></td><td>12s ago<br><time datetime="2026-01-01T00:00:00.000Z">' +
        '2026-01-01 00:00:00 UTC</time></td><td>current</td><td></td>',
    );
  });

  it('sends security headers and no X-Powered-By', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; /);
    expect(response.headers.get('content-security-policy')).toContain("style-src 'unsafe-inline'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-powered-by')).toBeNull();
  });
});

describe('/metrics', () => {
  it('serves the Prometheus text format by default', async () => {
    const { url, store } = await startApp();
    store.recordSuccess(FLAKY, flakySnapshot(NOW), 0.5);
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = await response.text();
    expect(body).toContain('trunk_flaky_tests_quarantined{repo="github.com/acme/widgets"} 3\n');
    expect(body).toContain('# TYPE trunk_exporter_api_schema_mismatches_total counter\n');
    expect(body).not.toContain('# EOF');
  });

  it('serves OpenMetrics when Prometheus asks for it, and Prometheus text again afterwards', async () => {
    const { url } = await startApp();
    const openMetrics = await fetch(`${url}/metrics`, {
      headers: {
        accept:
          'application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.1',
      },
    });
    expect(openMetrics.headers.get('content-type')).toBe(
      'application/openmetrics-text; version=1.0.0; charset=utf-8',
    );
    const openMetricsBody = await openMetrics.text();
    expect(openMetricsBody).toContain('# TYPE trunk_exporter_api_schema_mismatches counter\n');
    expect(openMetricsBody.endsWith('# EOF\n')).toBe(true);

    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('# TYPE trunk_exporter_api_schema_mismatches_total counter\n');
  });

  it('answers HEAD like GET without a body', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/metrics`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('leaves a metric whose collect() throws out of the page, counts it and logs it once', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const logger = createLogger({ level: 'error', secrets: () => [], destination });
    const registry = createRegistry({ defaultMetrics: false });
    new Gauge({
      name: 'test_broken',
      help: 'Always fails.',
      registers: [registry],
      collect() {
        throw new Error('collector exploded');
      },
    });
    const { url } = await startApp({ logger, registry });

    const first = await fetch(`${url}/metrics`);
    expect(first.status).toBe(200);
    const page = await first.text();
    expect(page).not.toContain('test_broken ');
    expect(page).toContain('trunk_exporter_build_info{');
    expect(page).toContain('trunk_exporter_render_errors_total{family="test_broken"} 1');
    // Each failed render counts; the same error is logged once.
    expect(await (await fetch(`${url}/metrics`)).text()).toContain(
      'trunk_exporter_render_errors_total{family="test_broken"} 2',
    );
    const logged = lines.filter((line) => line.includes('collector exploded'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('"family":"test_broken"');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers unknown paths with 404 plain text', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/nope?x=<script>`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('not found\n');
  });

  it.each(['/', '/metrics', '/healthz', '/readyz'])(
    'answers other methods on %s with 405 and Allow',
    async (path) => {
      const { url } = await startApp();
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await fetch(`${url}${path}`, { method });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        await response.text();
      }
    },
  );
});

/**
 * Sends `head` and then body bytes for as long as the connection stays open; resolves with what was
 * answered once the server closes it, or once it answers that it keeps the connection.
 */
function sendEndlessBody(url: string, head: string, chunk: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      answer += data;
      // An answer that keeps the connection means the body would be read on: stop sending it.
      const head = answer.split('\r\n\r\n');
      if (head.length > 1 && !/^Connection: close$/im.test(head[0] ?? '')) socket.destroy();
    });
    socket.on('error', () => {
      // A reset while writing is the server closing on the body: the answer came before it.
    });
    // The harnesses' 20 s for a condition: a server reading the body on never closes.
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept reading the body; it answered ${answer.slice(0, 200)}`));
    }, 20_000);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve(answer);
    });
    const pump = (): void => {
      while (!socket.destroyed && socket.write(chunk));
    };
    socket.on('drain', pump);
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

describe('request bodies', () => {
  // Node.js reads and drops a body nobody reads to keep the connection, at the client's line rate
  // until the request timeout: gigabytes from one anonymous request.
  it.each([
    [
      'POST /metrics',
      'Content-Length: 1099511627776',
      'x'.repeat(65_536),
      '405 Method Not Allowed',
    ],
    ['POST /nope', 'Content-Length: 1099511627776', 'x'.repeat(65_536), '404 Not Found'],
    ['GET /healthz', 'Transfer-Encoding: chunked', `10000\r\n${'x'.repeat(65_536)}\r\n`, '200 OK'],
  ])(
    'answers %s with %s and closes the connection instead of reading the body',
    async (requestLine, framing, chunk, status) => {
      // A request timeout beyond the test's: only closing on the body ends the connection in time.
      const { url } = await startApp({ limits: { requestTimeoutMs: 120_000 } });
      const answer = await sendEndlessBody(
        url,
        `${requestLine} HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n`,
        chunk,
      );
      const head = answer.split('\r\n\r\n')[0] ?? '';
      expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${status}`);
      expect(head).toMatch(/^Connection: close$/im);
    },
  );

  it('keeps the connection of a request without a body', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/healthz`, { method: 'GET' });
    expect(response.headers.get('connection')).toBe('keep-alive');
    await response.text();
  });
});
