// The simulator's webhooks against a real receiving server on loopback: every body parses with the
// exporter's parseWebhookEvent, every signature verifies with svix and with an HMAC computed here
// (so a misuse of the library cannot pass both), and there is one event per change the world made.
// A receiver that never answers costs dropped webhooks, never a blocked world.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'svix';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { webhookPayloads } from '../../src/simulator/webhookPayloads.js';
import { createWebhookSender, sendWorldWebhooks } from '../../src/simulator/webhookSender.js';
import type { SimulatorStatistics } from '../../src/simulator/statistics.js';
import { parseWebhookEvent } from '../../src/trunk/webhookEvents.js';

// 24 bytes of key, base64: a secret as Svix shows it.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const servers = new Set<Server>();
afterEach(async () => {
  await Promise.all(
    [...servers].map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => {
            resolve();
          });
        }),
    ),
  );
  servers.clear();
});

/** A receiver on a loopback port: records each request and answers 204, or never answers. */
async function startReceiver(answer: 'no_content' | 'never'): Promise<{
  url: string;
  received: Received[];
}> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (answer === 'no_content') response.writeHead(204).end();
    });
  });
  servers.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhooks/trunk`, received };
}

/** Svix's scheme, by hand: v1 = base64 HMAC-SHA256 of `id.timestamp.body` under the decoded key. */
function expectedSignature(id: string, timestamp: string, body: string): string {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  if (typeof value !== 'string') throw new Error(`no ${name} header`);
  return value;
}

/** Transitions into `state` counted by the world's statistics. */
function into(statistics: SimulatorStatistics, state: string): number {
  return Object.entries(statistics.transitions)
    .filter(([key]) => key.endsWith(`->${state}`))
    .reduce((total, [, count]) => total + count, 0);
}

function countTypes(received: readonly Received[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { body } of received) {
    const type = String((JSON.parse(body) as { type: unknown }).type);
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

function advanceAnHour(world: SimulatorWorld): void {
  world.advance(world.now() + 3600);
}

describe('simulator webhooks', () => {
  it('sends one signed, parseable event per change the world makes', async () => {
    const receiver = await startReceiver('no_content');
    const world = createSimulatorWorld({ seed: 42 });
    const sender = createWebhookSender({ url: receiver.url, secret: SECRET });
    sendWorldWebhooks(world, sender);
    const before = world.statistics();
    advanceAnHour(world);
    const after = world.statistics();
    await sender.idle();
    await sender.close();

    expect(sender.statistics()).toMatchObject({ failed: 0, dropped: 0, queued: 0 });
    expect(receiver.received.length).toBe(sender.statistics().sent);
    const verifier = new Webhook(SECRET);
    const ids = new Set<string>();
    for (const { headers, body } of receiver.received) {
      const id = header(headers, 'svix-id');
      const timestamp = header(headers, 'svix-timestamp');
      ids.add(id);
      expect(header(headers, 'svix-signature')).toBe(expectedSignature(id, timestamp, body));
      expect(() => {
        verifier.verify(body, {
          'svix-id': id,
          'svix-timestamp': timestamp,
          'svix-signature': header(headers, 'svix-signature'),
        });
      }).not.toThrow();
      const parsed = parseWebhookEvent(JSON.parse(body));
      if (!parsed.ok) throw new Error(`${body} does not parse: ${parsed.problem}`);
      expect(parsed.event.type).toBe((JSON.parse(body) as { type: string }).type);
      expect(parsed.event.repoName).toMatch(/^(github\.com|gitlab\.acme\.dev)\/acme\//);
      if (parsed.event.type === 'pull_request.failed' && parsed.event.kind === 'pull_request') {
        expect(parsed.event.failureReason).toMatch(/^TEST_RUN_/);
      }
    }
    expect(ids.size).toBe(receiver.received.length);

    const types = countTypes(receiver.received);
    const delta = (count: (statistics: SimulatorStatistics) => number) =>
      count(after) - count(before);
    expect(types['pull_request.submitted'] ?? 0).toBe(delta((s) => s.arrivals));
    expect(types['pull_request.merged'] ?? 0).toBe(delta((s) => into(s, 'merged')));
    expect(types['pull_request.failed'] ?? 0).toBe(delta((s) => into(s, 'failed')));
    expect(types['pull_request.canceled'] ?? 0).toBe(delta((s) => into(s, 'cancelled')));
    expect(types['pull_request.testing'] ?? 0).toBe(delta((s) => into(s, 'testing')));
    expect(types['pull_request.queued'] ?? 0).toBe(delta((s) => into(s, 'pending')));
    // Quarantined tests and the others: both announce their status changes.
    expect(types['v2.test_case.status_changed'] ?? 0).toBe(
      delta((s) => s.quarantineStatusChanges + s.testStatusChanges),
    );
    expect(types['test_case.monitor_status_changed']).toBe(types['v2.test_case.status_changed']);
    expect(delta((s) => s.testStatusChanges)).toBeGreaterThan(0);
    // An hour of four queues moves plenty of PRs, and some fail.
    expect(types['pull_request.merged']).toBeGreaterThan(5);
    expect(types['pull_request.failed']).toBeGreaterThan(0);
  });

  it('drops and counts what does not fit while the receiver hangs, without holding the world up', async () => {
    const receiver = await startReceiver('never');
    const world = createSimulatorWorld({ seed: 42 });
    const sender = createWebhookSender({
      url: receiver.url,
      secret: SECRET,
      maxQueued: 5,
      concurrency: 1,
      timeoutMs: 60_000,
    });
    let made = 0;
    world.subscribe((event) => {
      made += webhookPayloads(event).length;
    });
    sendWorldWebhooks(world, sender);
    advanceAnHour(world);
    // One in flight (hanging), five waiting, the rest dropped.
    expect(made).toBeGreaterThan(6);
    expect(sender.statistics()).toMatchObject({ sent: 0, dropped: made - 6, queued: 6 });
    await sender.close();
    expect(sender.statistics()).toMatchObject({ queued: 0, failed: 0 });
  });
});
