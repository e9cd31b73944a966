// On a fresh machine without Go, `npm test` skips the chart's render tests and says what to
// install: Debian's `go` command comes with golang-go, never with prometheus.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { helmRenderer } from './helmRender.js';

const saved = { PATH: process.env.PATH, REQUIRE: process.env.REQUIRE_SYSTEM_BINARIES };

afterEach(() => {
  vi.restoreAllMocks();
  process.env.PATH = saved.PATH;
  if (saved.REQUIRE === undefined) delete process.env.REQUIRE_SYSTEM_BINARIES;
  else process.env.REQUIRE_SYSTEM_BINARIES = saved.REQUIRE;
});

describe('the chart renderer without Go', () => {
  it('skips, naming golang-go as the package to install, and no package that lacks go', async () => {
    process.env.PATH = mkdtempSync(join(tmpdir(), 'trunk-exporter-empty-path-'));
    delete process.env.REQUIRE_SYSTEM_BINARIES;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

    expect(await helmRenderer()).toBeUndefined();

    const lines = warn.mock.calls.map((call) => String(call[0]));
    expect(lines.join('\n')).toContain('golang-go');
    for (const line of lines) expect(line).not.toContain('prometheus');
  });
});
