import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseCollector, ResponseTooLargeError } from '../../src/trunk/responseCollector.js';
import { cleanUp, startApiServer } from './harness.js';
import type { ApiServer } from './harness.js';

const MAX_ERROR_BODY_BYTES = 1024;

function dispatch(server: ApiServer, collector: ResponseCollector): Pool {
  const pool = new Pool(server.origin, { connections: 1 });
  pool.dispatch({ method: 'POST', path: '/v1/getQueue', body: '{}' }, collector);
  return pool;
}

afterEach(cleanUp);

describe('ResponseCollector', () => {
  it('gathers a 2xx body sent in many chunks, without a byte order mark', async () => {
    const line = `${'x'.repeat(999)}\n`;
    const server = await startApiServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-1' });
      res.write('\uFEFF');
      for (let chunk = 0; chunk < 100; chunk++) {
        res.write(line);
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    });
    const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    const pool = dispatch(server, collector);

    const response = await collector.done;

    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toBe('req-1');
    expect(response.text).toBe(line.repeat(100));
    await pool.close();
  });

  it('stops reading an error body at the excerpt size and closes the connection', async () => {
    let closedEarly = false;
    const server = await startApiServer(async (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.on('close', () => {
        closedEarly = !res.writableFinished;
      });
      // Far more than the excerpt needs, and never finished.
      for (let chunk = 0; chunk < 1000 && !res.destroyed; chunk++) {
        res.write('<p>bad gateway</p>'.repeat(10));
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    const pool = dispatch(server, collector);

    const response = await collector.done;

    expect(response.status).toBe(502);
    expect(response.text.length).toBeGreaterThanOrEqual(MAX_ERROR_BODY_BYTES);
    expect(response.text.length).toBeLessThan(MAX_ERROR_BODY_BYTES + 200);
    expect(response.text.startsWith('<p>bad gateway</p>')).toBe(true);
    await expect.poll(() => closedEarly).toBe(true);
    await pool.close();
  });

  it('keeps an error status without its body when the body fails mid-way', async () => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain', 'content-length': '1000' });
      res.write('upstream ');
      setTimeout(() => res.destroy(), 20);
    });
    const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    const pool = dispatch(server, collector);

    expect(await collector.done).toMatchObject({ status: 503, text: '' });
    await pool.close();
  });

  it('rejects with the error when a 2xx body fails mid-way', async () => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"state":');
      setTimeout(() => res.destroy(), 20);
    });
    const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    const pool = dispatch(server, collector);

    await expect(collector.done).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(collector.headers?.['content-length']).toBe('1000');
    await pool.close();
  });

  it('rejects with the reason at once when aborted, even while waiting for a connection', async () => {
    const server = await startApiServer(() => {
      // Never answer.
    });
    const hanging = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    const pool = dispatch(server, hanging);
    await expect.poll(() => server.requests.length).toBe(1);

    // The pool's one connection is taken, so this request waits in the pool.
    const queued = new ResponseCollector(MAX_ERROR_BODY_BYTES);
    pool.dispatch({ method: 'POST', path: '/v1/getQueue', body: '{}' }, queued);
    queued.abort(new Error('poll stopped'));
    await expect(queued.done).rejects.toThrow('poll stopped');

    hanging.abort(new Error('shutting down'));
    await expect(hanging.done).rejects.toThrow('shutting down');
    await pool.close();
    expect(server.requests).toHaveLength(1);
  });

  describe('a 2xx body over the cap', () => {
    const CAP = 64 * 1024;

    /** A server answering 200 with `bytes` of JSON-ish text, announced or chunked; counts bytes written. */
    async function oversized(bytes: number, announce: boolean) {
      const sent = { bytes: 0, closedEarly: false };
      const server = await startApiServer(async (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(announce ? { 'content-length': String(bytes) } : {}),
        });
        res.on('close', () => {
          sent.closedEarly = !res.writableFinished;
        });
        const chunk = 'x'.repeat(16 * 1024);
        while (sent.bytes < bytes && !res.destroyed) {
          res.write(chunk);
          sent.bytes += chunk.length;
          await new Promise((resolve) => setImmediate(resolve));
        }
        res.end();
      });
      return { server, sent };
    }

    it('is refused from its Content-Length, before a byte of the body arrives', async () => {
      let closedEarly = false;
      const server = await startApiServer((_req, res) => {
        // Announces 4 MiB and sends none of it: only the header can end this exchange.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4194304' });
        res.flushHeaders();
        res.on('close', () => {
          closedEarly = !res.writableFinished;
        });
      });
      const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES, CAP);
      const pool = dispatch(server, collector);

      await expect(collector.done).rejects.toBeInstanceOf(ResponseTooLargeError);
      await expect.poll(() => closedEarly).toBe(true);
      await pool.close();
    });

    it('without a Content-Length, is refused once the bytes read pass the cap', async () => {
      const { server, sent } = await oversized(4 * 1024 * 1024, false);
      const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES, CAP);
      const pool = dispatch(server, collector);

      await expect(collector.done).rejects.toThrow(`response body larger than ${CAP} bytes`);
      await expect.poll(() => sent.closedEarly).toBe(true);
      expect(sent.bytes).toBeLessThan(4 * 1024 * 1024);
      await pool.close();
    });

    it('up to the cap exactly, announced or not, is read whole', async () => {
      for (const announce of [true, false]) {
        const { server } = await oversized(CAP, announce);
        const collector = new ResponseCollector(MAX_ERROR_BODY_BYTES, CAP);
        const pool = dispatch(server, collector);

        const response = await collector.done;
        expect(response.text).toBe('x'.repeat(CAP));
        await pool.close();
      }
    });
  });
});
