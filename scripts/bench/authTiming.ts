// How long a refused basic-auth request takes, by username: one user hashed at bcrypt cost 4, one
// at cost 12, and a username that does not exist. Runs the built exporter (bin/trunk-exporter.js)
// as a child process and asks for /healthz with wrong passwords, each password new so no failure
// is remembered. `npm run build && node scripts/bench/authTiming.ts [rounds] [repository root]`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { ROOT } from './built.ts';
import { idleExporterConfig } from './processes.ts';

const rounds = Number(process.argv[2] ?? 21);
const root = process.argv[3] ?? ROOT;
const port = 20_000 + Math.floor(Math.random() * 10_000);
const directory = mkdtempSync(join(tmpdir(), 'auth-timing-'));
const config = join(directory, 'config.yaml');
writeFileSync(
  config,
  idleExporterConfig(port, [
    '  basicAuthUsers:',
    `    cheap: "${bcrypt.hashSync('cheap-password', 4)}"`,
    `    costly: "${bcrypt.hashSync('costly-password', 12)}"`,
  ]),
);
const child = spawn(process.execPath, [join(root, 'bin/trunk-exporter.js'), '--config', config], {
  stdio: 'ignore',
});

function ask(username: string, password: string): Promise<Response> {
  const credentials = Buffer.from(`${username}:${password}`).toString('base64');
  return fetch(`http://127.0.0.1:${port}/healthz`, {
    headers: { authorization: `Basic ${credentials}` },
  });
}

try {
  for (let tries = 0; ; tries++) {
    try {
      await (await ask('cheap', 'cheap-password')).arrayBuffer();
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const times = new Map<string, number[]>([
    ['cheap', []],
    ['costly', []],
    ['nobody', []],
  ]);
  for (let round = 0; round < rounds; round++) {
    for (const [username, list] of times) {
      const startedAt = performance.now();
      const response = await ask(username, `wrong-${round}`);
      await response.arrayBuffer();
      if (response.status !== 401) throw new Error(`${username}: HTTP ${response.status}`);
      list.push(performance.now() - startedAt);
    }
  }
  for (const [username, list] of times) {
    list.sort((a, b) => a - b);
    const median = list[Math.floor(list.length / 2)] ?? Number.NaN;
    const spread = `${(list[0] ?? 0).toFixed(1)}-${(list.at(-1) ?? 0).toFixed(1)}`;
    console.log(
      `${username.padEnd(7)} median ${median.toFixed(1)} ms (${spread} ms, n=${list.length})`,
    );
  }
} finally {
  child.kill();
  rmSync(directory, { recursive: true, force: true });
}
