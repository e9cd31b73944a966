// Real SIGHUPs sent to this test process: the listener is installed first, so the default action
// (terminate) never applies.
import { afterEach, describe, expect, it } from 'vitest';
import { listenToProcessSignals, type ProcessSignals } from '../../src/cli/processSignals.js';

const listening: ProcessSignals[] = [];
afterEach(() => {
  for (const signals of listening.splice(0)) signals.dispose();
});

/**
 * Sends SIGHUP to this process and resolves once it has been delivered: listeners run in the order
 * they were added, so the ones under test have run when this later one does.
 */
async function hangUp(): Promise<void> {
  const delivered = new Promise((resolve) => process.once('SIGHUP', resolve));
  process.kill(process.pid, 'SIGHUP');
  await delivered;
}

describe('process signals', () => {
  it('keeps a SIGHUP that arrives during start-up and reloads once there is something to reload', async () => {
    const signals = listenToProcessSignals();
    listening.push(signals);
    await hangUp();
    await hangUp();
    let reloads = 0;
    signals.onHangup(() => reloads++);
    // Two hang-ups before start-up finished ask for one reload: the file is read once, as it is now.
    expect(reloads).toBe(1);
    await hangUp();
    expect(reloads).toBe(2);
  });

  it('stops listening when disposed', async () => {
    const signals = listenToProcessSignals();
    let reloads = 0;
    signals.onHangup(() => reloads++);
    signals.dispose();
    // Another listener keeps this process alive while checking that the disposed one is deaf.
    const guard = listenToProcessSignals();
    listening.push(guard);
    await hangUp();
    expect(reloads).toBe(0);
  });
});
