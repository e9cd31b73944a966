// The exporter process loads no copy of Node.js's own undici (the one behind fetch() and
// WebSocket): it reads Trunk through the undici package's pool, and Node.js's copy is a large
// script and its compiled code held for nothing. An ES import of node:http loads it, through three
// lazy exports the import reads (WebSocket, CloseEvent, MessageEvent).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, startExporterProcess } from '../support/cli.js';
import { configYaml, startFrozenSimulator } from '../support/exporterHarness.js';

/** Preload that prints, on SIGTERM, the built-in modules of Node.js the process has loaded. */
const LIST_BUILTINS = `data:text/javascript,${encodeURIComponent(
  `process.prependListener('SIGTERM', () => { process.stdout.write('BUILTINS ' + JSON.stringify(process.moduleLoadList.filter((name) => name.startsWith('NativeModule '))) + '\\n'); });`,
)}`;

describe('the exporter process', () => {
  it("loads no copy of Node.js's own undici, polling and scraped", async () => {
    const { simulator } = await startFrozenSimulator();
    const path = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-builtins-')), 'config.yaml');
    await writeFile(
      path,
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: '  - repo: github.com/acme/web\n    branches: [main]\n    flakyTests: true',
      }),
    );
    const cli = startExporterProcess(process.execPath, [
      '--import',
      LIST_BUILTINS,
      CLI_BIN,
      '--config',
      path,
    ]);
    let builtins: string[];
    try {
      const url = await cli.url;
      // Polled: the targets are up; scraped both ways Prometheus and a person do.
      for (;;) {
        const page = await (await fetch(`${url}/metrics`)).text();
        if (/^trunk_exporter_target_up\{[^}]*kind="merge_queue"[^}]*\} 1$/m.test(page)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const gzip = await fetch(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
      expect(gzip.status).toBe(200);
    } finally {
      cli.child.kill('SIGTERM');
      expect(await cli.exit).toBe(0);
      const line = /^BUILTINS (.*)$/m.exec(cli.stdout())?.[1];
      builtins = JSON.parse(line ?? '[]') as string[];
    }
    // The preload saw the modules the exporter loaded: the HTTP server's among them.
    expect(builtins).toContain('NativeModule _http_server');
    expect(builtins.filter((name) => name.includes('undici'))).toEqual([]);
  });
});
