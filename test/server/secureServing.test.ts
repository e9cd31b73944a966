// TLS and basic auth end to end: a real exporter over HTTPS with the checked-in test certificates
// (test/fixtures/tls/README.md says how they were made), asked by a real TLS client (node:https).
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket, type PeerCertificate } from 'node:tls';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import { startPrometheus, type InstantSample } from '../support/prometheus.js';
import { findSystemBinary } from '../support/systemBinary.js';

const tlsDirectory = join(import.meta.dirname, '..', 'fixtures', 'tls');
const USER = 'prometheus';
const PASSWORD = 'correct horse: battery staple';
const HASH = bcrypt.hashSync(PASSWORD, 4);

interface HttpsAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly certificate: PeerCertificate;
}

/** One request over a fresh TLS connection that trusts only `ca`. */
function httpsRequest(
  url: string,
  options: { method?: string; auth?: string; ca: string },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: options.ca,
        agent: false,
        headers:
          options.auth === undefined
            ? {}
            : { authorization: `Basic ${Buffer.from(options.auth).toString('base64')}` },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          const socket = response.socket;
          if (!(socket instanceof TLSSocket)) {
            reject(new Error('not a TLS connection'));
            return;
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body,
            certificate: socket.getPeerCertificate(),
          });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** An exporter serving HTTPS with basic auth and the reload endpoint, its config in a file. */
async function startSecureExporter(): Promise<{
  run: ExporterUnderTest;
  file: string;
  directory: string;
  yaml: (certName: string) => string;
}> {
  const { simulator } = await startFrozenSimulator();
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-tls-'));
  for (const name of ['server.crt', 'server.key', 'rotated.crt', 'rotated.key']) {
    await copyFile(join(tlsDirectory, name), join(directory, name));
  }
  const yaml = (certName: string) =>
    configYaml({
      apiUrl: simulator.baseUrl,
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      server: [
        '  enableReload: true',
        // Every request here is a fresh connection, a full handshake, faster than the default
        // allows one address (test/server/newConnectionRate.test.ts holds the default).
        '  maxTlsConnectionsPerAddressPerSecond: 1000',
        '  tls:',
        `    certFile: ${join(directory, `${certName}.crt`)}`,
        `    keyFile: ${join(directory, `${certName}.key`)}`,
        '  basicAuthUsers:',
        `    ${USER}: ${HASH}`,
      ].join('\n'),
    });
  const file = join(directory, 'config.yaml');
  await writeFile(file, yaml('server'));
  const run = await startTestExporter(yaml('server'), 'info', file);
  return { run, file, directory, yaml };
}

/** A loopback port free a moment ago, for a program that cannot report the port it bound. */
const ENDPOINTS = [
  { method: 'GET', path: '/metrics', ok: 200 },
  { method: 'GET', path: '/', ok: 200 },
  { method: 'GET', path: '/healthz', ok: 200 },
  { method: 'GET', path: '/readyz', ok: 200 },
  { method: 'POST', path: '/-/reload', ok: 200 },
] as const;

describe('TLS and basic auth', () => {
  it('guards every endpoint: 401 with a Basic challenge unless the credentials are right', async () => {
    const { run } = await startSecureExporter();
    expect(run.exporter.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = await readFile(join(tlsDirectory, 'server.crt'), 'utf8');
    // Ready first, so /readyz's answer depends only on the credentials.
    await expect
      .poll(
        async () =>
          (await httpsRequest(`${run.exporter.url}/readyz`, { ca, auth: `${USER}:${PASSWORD}` }))
            .status,
        { timeout: 10_000, interval: 50 },
      )
      .toBe(200);

    for (const { method, path, ok } of ENDPOINTS) {
      const url = `${run.exporter.url}${path}`;
      for (const auth of [undefined, `${USER}:wrong`, `nobody:${PASSWORD}`, `${USER}:`]) {
        const denied = await httpsRequest(url, { method, ca, ...(auth && { auth }) });
        expect({ path, auth, status: denied.status }).toEqual({ path, auth, status: 401 });
        expect(denied.headers['www-authenticate']).toBe(
          'Basic realm="trunk-exporter", charset="UTF-8"',
        );
        expect(denied.body).toBe('unauthorized\n');
      }
      const allowed = await httpsRequest(url, { method, ca, auth: `${USER}:${PASSWORD}` });
      expect({ path, status: allowed.status }).toEqual({ path, status: ok });
    }
    const metrics = await httpsRequest(`${run.exporter.url}/metrics`, {
      ca,
      auth: `${USER}:${PASSWORD}`,
    });
    expect(metrics.body).toContain('trunk_exporter_target_up{');
    expect(run.logs()).not.toContain(PASSWORD);
  });

  it('refuses clients that do not trust the certificate, and plain HTTP', async () => {
    const { run } = await startSecureExporter();
    const otherCa = await readFile(join(tlsDirectory, 'rotated.crt'), 'utf8');
    await expect(httpsRequest(`${run.exporter.url}/healthz`, { ca: otherCa })).rejects.toThrow(
      /self-signed certificate|unable to verify/,
    );
    const plain = run.exporter.url.replace('https://', 'http://');
    await expect(fetch(`${plain}/healthz`)).rejects.toThrow();
  });

  it('serves a renewed certificate after a reload, without a restart', async () => {
    const { run, file, yaml } = await startSecureExporter();
    const [serverCa, rotatedCa] = await Promise.all([
      readFile(join(tlsDirectory, 'server.crt'), 'utf8'),
      readFile(join(tlsDirectory, 'rotated.crt'), 'utf8'),
    ]);
    const auth = `${USER}:${PASSWORD}`;
    const before = await httpsRequest(`${run.exporter.url}/healthz`, { ca: serverCa, auth });
    expect(before.status).toBe(200);

    await writeFile(file, yaml('rotated'));
    const reload = await httpsRequest(`${run.exporter.url}/-/reload`, {
      method: 'POST',
      ca: serverCa,
      auth,
    });
    expect(reload.body).toBe(
      'configuration reloaded: 0 targets added, 0 removed; settings changed: server.tls\n',
    );
    const after = await httpsRequest(`${run.exporter.url}/healthz`, { ca: rotatedCa, auth });
    expect(after.status).toBe(200);
    expect(after.certificate.fingerprint256).not.toBe(before.certificate.fingerprint256);
  });

  it('is scraped by a real Prometheus over TLS with basic auth, and refused with a wrong password', async () => {
    const prometheus = findSystemBinary('prometheus', 'prometheus');
    if (prometheus === undefined) return;
    const { run, directory } = await startSecureExporter();
    const target = new URL(run.exporter.url).host;
    await writeFile(join(directory, 'right'), PASSWORD);
    await writeFile(join(directory, 'wrong'), 'not-the-password');
    const job = (name: string) => ({
      job_name: name,
      scheme: 'https',
      tls_config: { ca_file: join(directory, 'server.crt') },
      basic_auth: { username: USER, password_file: join(directory, name) },
      static_configs: [{ targets: [target] }],
    });
    const server = await startPrometheus({
      binary: prometheus,
      scrapeConfigs: [job('right'), job('wrong')],
    });
    try {
      const deadline = Date.now() + 30_000;
      let up: InstantSample[] = [];
      while (up.length < 2) {
        if (Date.now() > deadline) throw new Error(`no up for both jobs:\n${server.log()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        up = await server.query('up');
      }
      const byJob = Object.fromEntries(
        up.map((sample): [string, string] => [sample.metric.job ?? '', sample.value[1]]),
      );
      expect(byJob).toEqual({ right: '1', wrong: '0' });
    } finally {
      await server.stop();
    }
  });
});
