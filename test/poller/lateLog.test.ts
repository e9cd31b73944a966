// LateLog: late polls logged at most once a minute per kind, the next line saying how many were
// left out and naming a few, however many targets are late.
import { describe, expect, it } from 'vitest';
import { LATE_LOG_INTERVAL_MS, LateLog } from '../../src/poller/lateLog.js';
import type { Target } from '../../src/snapshot/types.js';
import { capturingLogger } from '../trunk/harness.js';

const queue = (branch: string): Target => ({
  kind: 'merge_queue',
  repo: 'github.com/acme/web',
  branch,
});
const quarantine: Target = { kind: 'flaky_tests', repo: 'github.com/acme/web', branch: '' };

interface Line {
  readonly msg: string;
  readonly kind: string;
  readonly branch?: string;
  readonly notLoggedPolls?: number;
  readonly notLoggedTargets?: number;
}

function rig() {
  const clock = { now: 1_000_000 };
  const { logger, lines } = capturingLogger();
  const log = new LateLog(logger, () => clock.now);
  // The logger's stream takes a write per turn of the event loop: let it take them all.
  const parsed = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return lines.map((line) => JSON.parse(line) as Line);
  };
  return { clock, log, parsed };
}

describe('LateLog', () => {
  it('logs the first late poll of a kind at once, naming its target', async () => {
    const { log, parsed } = rig();
    log.late(queue('main'), 30);
    expect(await parsed()).toEqual([
      expect.objectContaining({
        kind: 'merge_queue',
        branch: 'main',
        msg: expect.stringContaining(
          'poll of merge queue github.com/acme/web main is late: still running after its interval of 30s',
        ) as unknown,
      }),
    ]);
    expect((await parsed())[0]?.notLoggedPolls).toBeUndefined();
  });

  it('logs one line a minute per kind, however many targets are late, the next saying how many it left out', async () => {
    const { clock, log, parsed } = rig();
    // 1,000 queues late every 30 s for a minute and a half: every overrun of a flooded exporter.
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 1_000; index++) log.late(queue(`b${String(index)}`), 30);
      clock.now += 30_000;
    }
    const lines = await parsed();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      branch: 'b0',
      notLoggedPolls: 1_999,
      notLoggedTargets: 1_000,
    });
    expect(lines[1]?.msg).toContain(
      '1999 more late polls of 1000 merge_queue targets in the last minute were not logged ' +
        '(e.g. merge queue github.com/acme/web b1, merge queue github.com/acme/web b2, merge queue github.com/acme/web b3)',
    );
  });

  it('keeps each kind to its own minute', async () => {
    const { clock, log, parsed } = rig();
    log.late(queue('main'), 30);
    log.late(quarantine, 300);
    log.late(queue('main'), 30);
    expect((await parsed()).map((line) => line.kind)).toEqual(['merge_queue', 'flaky_tests']);
    clock.now += LATE_LOG_INTERVAL_MS - 1;
    log.late(queue('main'), 30);
    expect(await parsed()).toHaveLength(2);
    clock.now += 1;
    log.late(queue('main'), 30);
    expect(await parsed()).toHaveLength(3);
    expect((await parsed())[2]).toMatchObject({ notLoggedPolls: 2, notLoggedTargets: 1 });
  });
});
