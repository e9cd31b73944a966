// Reloads end to end: a real exporter polling a real simulator, its config file rewritten on disk,
// reloaded through POST /-/reload or exporter.reload (what SIGHUP calls), observed from outside.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import type { ConfigError } from '../../src/config/problems.js';
import { configErrorLines } from '../../src/config/problems.js';
import { select, sum, type Sample } from '../support/exposition.js';
import {
  configYaml,
  FIRST_POLL_SPREAD_SECONDS,
  startFrozenSimulator,
  startTestExporter,
  SIMULATOR_TOKEN,
} from '../support/exporterHarness.js';

const WEB = '  - repo: github.com/acme/web\n    branches: [main]';
const API = '  - repo: github.com/acme/api\n    branches: [main]';
const MOBILE = '  - repo: github.com/acme/mobile\n    branches: [develop]';
/** Only getQueue calls, one per poll, so request counts are poll counts. */
const SLOW_POLLING =
  '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 600\n  pullRequestDetails: false';
const RELOAD_SUCCESSFUL = 'trunk_exporter_config_last_reload_successful';
const RELOAD_TIMESTAMP = 'trunk_exporter_config_last_reload_success_timestamp_seconds';

async function configFile(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'trunk-exporter-reload-')), 'config.yaml');
}

function upTargets(samples: readonly Sample[]): string[] {
  return select(samples, 'trunk_exporter_target_up')
    .map((sample) => `${sample.labels.repo ?? ''}@${sample.labels.branch ?? ''}`)
    .sort();
}

describe('configuration reload', () => {
  it('applies a valid file: new targets start, removed ones go, kept ones keep data and schedule', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = await configFile();
    const yaml = (targets: string) =>
      configYaml({
        apiUrl: simulator.baseUrl,
        targets,
        polling: SLOW_POLLING,
        server: '  enableReload: true',
      });
    await writeFile(file, yaml(`${WEB}\n${API}`));
    const run = await startTestExporter(yaml(`${WEB}\n${API}`), 'info', file);
    await run.waitUntilReady();
    const webBefore = run.exporter.store
      .statuses()
      .find((status) => status.target.repo.endsWith('web'));
    expect(webBefore?.snapshot).toBeDefined();
    const startedAt = sum(await run.samples(), RELOAD_TIMESTAMP);
    expect(startedAt).toBeGreaterThan(0);

    await writeFile(file, yaml(`${WEB}\n${MOBILE}`));
    const response = await fetch(`${run.exporter.url}/-/reload`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      'configuration reloaded: 1 target added (github.com/acme/mobile@develop), ' +
        '1 removed (github.com/acme/api@main); no settings changed\n',
    );
    const samples = await run.waitFor(
      (current) => upTargets(current).includes('github.com/acme/mobile@develop'),
      'the added target to be polled',
    );
    expect(upTargets(samples)).toEqual([
      'github.com/acme/mobile@develop',
      'github.com/acme/web@main',
    ]);
    expect(sum(samples, RELOAD_SUCCESSFUL)).toBe(1);
    expect(sum(samples, RELOAD_TIMESTAMP)).toBeGreaterThanOrEqual(startedAt);

    // A restarted loop would poll again within its first-poll spread: wait well past it.
    await sleep(FIRST_POLL_SPREAD_SECONDS * 1000 + 400);
    expect(simulator.requestCounts()['/v1/getQueue']).toBe(3);
    const webAfter = run.exporter.store
      .statuses()
      .find((status) => status.target.repo.endsWith('web'));
    expect(webAfter).toBe(webBefore);
    expect(run.logs()).toContain(
      '"msg":"configuration reloaded: 1 target added (github.com/acme/mobile@develop), 1 removed (github.com/acme/api@main); no settings changed"',
    );
  });

  it('rejects an invalid file with --check-config messages and keeps the running config', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = await configFile();
    const valid = configYaml({
      apiUrl: simulator.baseUrl,
      targets: WEB,
      polling: SLOW_POLLING,
      server: '  enableReload: true',
    });
    await writeFile(file, valid);
    const run = await startTestExporter(valid, 'info', file);
    await run.waitUntilReady();
    const before = await run.samples();

    const invalid = valid.replace('branches: [main]', 'branches: []').replace('600', '"soon"');
    await writeFile(file, invalid);
    const expectedLines = await loadConfigFile(file, {}).then(
      () => [],
      (error: unknown) => configErrorLines(error as ConfigError),
    );
    expect(expectedLines).toEqual([
      `${file}: polling.mergeQueueIntervalSeconds: expected number, got string (line 13)`,
      `${file}: targets[0].branches: expected a non-empty list (or flakyTests: true for a repository without a merge queue) (line 18)`,
    ]);
    const response = await fetch(`${run.exporter.url}/-/reload`, { method: 'POST' });
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(
      `configuration reload rejected; the running configuration stays:\n${expectedLines.join('\n')}\n`,
    );
    const after = await run.samples();
    expect(sum(after, RELOAD_SUCCESSFUL)).toBe(0);
    expect(sum(after, RELOAD_TIMESTAMP)).toBe(sum(before, RELOAD_TIMESTAMP));
    expect(upTargets(after)).toEqual(['github.com/acme/web@main']);
    expect(select(after, 'trunk_merge_queue_state')).toEqual(
      select(before, 'trunk_merge_queue_state'),
    );

    await writeFile(file, valid);
    const fixed = await run.exporter.reload('SIGHUP');
    expect(fixed).toEqual({
      applied: true,
      message: 'configuration reloaded: 0 targets added, 0 removed; no settings changed',
    });
    expect(sum(await run.samples(), RELOAD_SUCCESSFUL)).toBe(1);
  });

  it('re-reads tokenFile, so a rotated token reaches the client and never the log', async () => {
    const { simulator } = await startFrozenSimulator();
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-token-'));
    const tokenFile = join(directory, 'token');
    const file = join(directory, 'config.yaml');
    const revoked = 'revoked-token-0ld';
    await writeFile(tokenFile, `${revoked}\n`);
    const yaml = configYaml({
      apiUrl: simulator.baseUrl,
      tokenFile,
      targets: WEB,
      polling: '  mergeQueueIntervalSeconds: 0.2\n  pullRequestDetails: false',
    });
    await writeFile(file, yaml);
    const run = await startTestExporter(yaml, 'info', file);
    await run.waitFor(
      (samples) => sum(samples, 'trunk_exporter_api_requests_total', { code: '401' }) > 0,
      'a 401 for the revoked token',
    );
    expect(sum(await run.samples(), 'trunk_exporter_target_up')).toBe(0);

    await writeFile(tokenFile, `${SIMULATOR_TOKEN}\n`);
    const result = await run.exporter.reload('SIGHUP');
    expect(result).toEqual({
      applied: true,
      message: 'configuration reloaded: 0 targets added, 0 removed; settings changed: trunk.token',
    });
    await run.waitFor(
      (samples) => sum(samples, 'trunk_exporter_target_up') === 1,
      'the target to come up with the rotated token',
    );
    expect(run.logs()).toContain('settings changed: trunk.token');
    expect(run.logs()).not.toContain(revoked);
    expect(run.logs()).not.toContain(SIMULATOR_TOKEN);
  });

  it('rewrites HELP texts that state a changed interval, and API counters keep counting', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = await configFile();
    const yaml = (interval: number) =>
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: WEB,
        polling: SLOW_POLLING.replace(
          'mergeQueueIntervalSeconds: 600',
          `mergeQueueIntervalSeconds: ${interval}`,
        ),
      });
    await writeFile(file, yaml(600));
    const run = await startTestExporter(yaml(600), 'info', file);
    await run.waitUntilReady();
    const requestsBefore = sum(await run.samples(), 'trunk_exporter_api_requests_total');
    expect(requestsBefore).toBe(1);
    expect(await run.scrape()).toContain(
      'getQueue (API v1) or GET /v2/merge-queues (API v2) every 10m.',
    );

    await writeFile(file, yaml(450));
    expect((await run.exporter.reload('SIGHUP')).message).toContain(
      'settings changed: polling.mergeQueueIntervalSeconds',
    );
    const page = await run.scrape();
    expect(page).toContain(
      '# HELP trunk_merge_queue_state Merge queue state: 1 for the current state, 0 for the other known states. Refreshed by polling getQueue (API v1) or GET /v2/merge-queues (API v2) every 7m30s.',
    );
    expect(page).not.toContain('(API v2) every 10m');
    expect(page).toContain('Targets are polled every 7m30s (merge_queue)');
    expect(sum(await run.samples(), 'trunk_exporter_api_requests_total')).toBeGreaterThanOrEqual(
      requestsBefore,
    );
  });

  it('keeps serving where it is when a reload changes the listen port, and says so', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = await configFile();
    const yaml = configYaml({ apiUrl: simulator.baseUrl, targets: WEB, polling: SLOW_POLLING });
    await writeFile(file, yaml.replace('port: 0', 'port: 1'));
    const run = await startTestExporter(yaml, 'info', file);
    const result = await run.exporter.reload('SIGHUP');
    expect(result).toEqual({
      applied: true,
      message:
        'configuration reloaded: 0 targets added, 0 removed; settings changed: server.port; ' +
        'not applied until a restart: server.port',
    });
    // Log lines reach the capture buffer a tick later than the reload's answer.
    await vi.waitFor(
      () => {
        expect(run.logs()).toMatch(/"level":40,.*"needRestart":\["server.port"\]/);
      },
      { timeout: 10_000 },
    );
    expect((await fetch(`${run.exporter.url}/healthz`)).status).toBe(200);
  });

  it('answers 403 while server.enableReload is off, and 405 to GET', async () => {
    const { simulator } = await startFrozenSimulator();
    const run = await startTestExporter(
      configYaml({ apiUrl: simulator.baseUrl, targets: WEB, polling: SLOW_POLLING }),
    );
    const disabled = await fetch(`${run.exporter.url}/-/reload`, { method: 'POST' });
    expect(disabled.status).toBe(403);
    expect(await disabled.text()).toBe(
      'reload is disabled: set server.enableReload: true, or send SIGHUP\n',
    );
    const get = await fetch(`${run.exporter.url}/-/reload`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
