// Slow bodies and redeliveries against a real exporter over loopback: slow-body connections from
// one peer address (127.0.0.2) must not keep genuine deliveries from another (127.0.0.1) from
// being answered, and a redelivery a day later is still a duplicate.
import { request } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sum } from '../support/exposition.js';
import { startWebhookExporter, webhookResults } from '../support/webhookExporter.js';
import { postWebhookFrom, signedHeaders, slowBodyAttack } from '../support/webhooks.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const HOUR_MS = 3_600_000;

function mergedEvent(prNumber: number): string {
  return JSON.stringify({
    type: 'pull_request.merged',
    pr_number: prNumber,
    repository: { host: 'github.com', owner: 'acme', name: 'web' },
    target_branch: 'main',
  });
}

describe('webhook bodies under a slow-body attack', () => {
  it('answers at least 95 % of genuine deliveries 204 while 8 slow connections trickle', async () => {
    const { test, url } = await startWebhookExporter({ webhooks: '  bodyTimeoutSeconds: 1' });
    const attack = slowBodyAttack(url, '127.0.0.2', 8);
    try {
      // Let the attack take its slots, run into its deadline and reopen at least once.
      await sleep(1500);
      const statuses: number[] = [];
      for (let round = 0; round < 10; round++) {
        const bodies = [0, 1, 2, 3].map((index) => mergedEvent(1000 + round * 4 + index));
        statuses.push(
          ...(await Promise.all(
            bodies.map((body) => postWebhookFrom(url, body, signedHeaders(body), '127.0.0.1')),
          )),
        );
        await sleep(150);
      }
      const answered = statuses.filter((status) => status === 204).length;
      expect(answered / statuses.length).toBeGreaterThanOrEqual(0.95);
    } finally {
      attack.stop();
    }
    // Every cut of an attacker was counted (503 when a newcomer took its slot, 408 at the deadline).
    expect(attack.statuses.length).toBeGreaterThan(0);
    const results = await webhookResults(test);
    expect((results.busy ?? 0) + (results.timeout ?? 0)).toBeGreaterThanOrEqual(
      attack.statuses.length,
    );
    expect(results.accepted).toBeGreaterThanOrEqual(38);
  });

  it('cuts a body that has not arrived within bodyTimeoutSeconds with 408, counted as timeout', async () => {
    const { test, url } = await startWebhookExporter({ webhooks: '  bodyTimeoutSeconds: 0.5' });
    const attack = slowBodyAttack(url, '127.0.0.2', 1);
    const started = Date.now();
    try {
      while (attack.statuses.length === 0 && Date.now() - started < 5000) await sleep(50);
    } finally {
      attack.stop();
    }
    expect(attack.statuses[0]).toBe(408);
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await webhookResults(test)).timeout).toBeGreaterThanOrEqual(1);
  });

  it("holds a body timeout past the server's 10 s request timeout: its own 408, counted as timeout", async () => {
    // `bodyTimeoutSeconds`: "at most 60"; every answer on the path is counted. A signed delivery
    // whose body comes a byte every 500 ms, past the server's 10 s and the second Node.js takes
    // to check it.
    const { test, url } = await startWebhookExporter({ webhooks: '  bodyTimeoutSeconds: 12.5' });
    const body = mergedEvent(77);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: { ...signedHeaders(body), 'content-length': String(Buffer.byteLength(body)) },
      });
      let sent = 0;
      const trickle = setInterval(() => {
        if (sent < body.length - 1) req.write(body.charAt(sent++));
      }, 500);
      req.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          clearInterval(trickle);
          req.destroy();
          resolve({ status: response.statusCode ?? 0, text });
        });
      });
      req.on('error', (error) => {
        clearInterval(trickle);
        reject(error);
      });
      req.flushHeaders();
    });
    expect(answer).toEqual({ status: 408, text: expect.stringContaining('body') as string });
    expect((await webhookResults(test)).timeout).toBe(1);
  }, 30_000);

  it('drops the slowest reader for a newcomer when every slot is taken, counted as busy', async () => {
    const { test, url } = await startWebhookExporter({ webhooks: '  bodyTimeoutSeconds: 30' });
    // Four peers holding four slow bodies each: all 16 slots.
    const attacks = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map((address) =>
      slowBodyAttack(url, address, 4),
    );
    // Deliveries until one finds every slot taken and an attacker is dropped for it: how soon the
    // attackers hold all 16 depends on how busy the machine is.
    const delivered: number[] = [];
    try {
      const deadline = Date.now() + 20_000;
      while (!attacks.some((attack) => attack.statuses.includes(503))) {
        if (Date.now() > deadline) throw new Error('no slow reader was dropped for a newcomer');
        const body = mergedEvent(7 + delivered.length);
        delivered.push(await postWebhookFrom(url, body, signedHeaders(body), '127.0.0.1'));
        await sleep(20);
      }
    } finally {
      for (const attack of attacks) attack.stop();
    }
    expect(delivered.filter((status) => status !== 204)).toEqual([]);
    expect(await webhookResults(test)).toMatchObject({ accepted: delivered.length });
    expect((await webhookResults(test)).busy).toBeGreaterThan(0);
  });
});

describe('webhook redeliveries', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers a redelivery re-signed 26 hours later 204 duplicate, counting nothing again', async () => {
    const { test, url } = await startWebhookExporter();
    const body = mergedEvent(42);
    const id = 'msg_redelivered';
    const start = Date.now();
    // Only Date is faked: the server's timers and sockets run as usual.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(start);
    expect(await postWebhookFrom(url, body, signedHeaders(body, { id }), '127.0.0.1')).toBe(204);
    // Svix's last retry comes about 27 hours after the first attempt, re-signed with a fresh
    // timestamp and the same id.
    vi.setSystemTime(start + 26 * HOUR_MS);
    expect(await postWebhookFrom(url, body, signedHeaders(body, { id }), '127.0.0.1')).toBe(204);
    vi.useRealTimers();
    expect(await webhookResults(test)).toMatchObject({ accepted: 1, duplicate: 1 });
    expect(sum(await test.samples(), 'trunk_merge_queue_webhook_events_total')).toBe(1);
  });
});
