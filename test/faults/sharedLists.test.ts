// The organization's list of merge queues (API v2), which every queue's poll shares, slow or
// hanging: the known queues keep their schedule on the last list read.
import { describe, expect, it } from 'vitest';
import { select, sum } from '../support/exposition.js';
import { API, WEB, callsTo, startFaultRig, until } from './harness.js';

describe('the list of merge queues hangs', () => {
  it('the known queues keep being polled on the last list, none late', async () => {
    const rig = await startFaultRig({
      apiKey: 'trunk_v2_shared-lists',
      // Each read of the list hangs until the timeout and is tried again within the poll's 2 s.
      polling:
        '  mergeQueueIntervalSeconds: 2\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 60',
      timeoutSeconds: 1.5,
    });
    await rig.subject.waitUntilReady();
    rig.faults.inject('v2/merge-queues', { kind: 'hang' }, { times: Infinity });
    const hung = () =>
      callsTo(rig.faults, 'v2/merge-queues').filter((call) => call.fault === 'hang');
    const entriesOf = (repo: string) =>
      callsTo(rig.faults, 'v2/merge-queues/{id}/pull-requests', repo).length;
    const before = { web: entriesOf(WEB), api: entriesOf(API) };

    await until(() => hung().length >= 3, 'three reads of the list that hang');
    const thirdHungAt = hung()[2]?.at ?? Number.NaN;
    // Each queue's poll read its pull requests on the last list while the list hung ...
    await until(
      () => entriesOf(WEB) >= before.web + 3 && entriesOf(API) >= before.api + 3,
      'three polls of each queue',
    );
    await rig.subject.waitFor(
      (samples) =>
        select(samples, 'trunk_exporter_last_success_timestamp_seconds').every(
          (sample) => sample.value * 1000 > thirdHungAt,
        ),
      'both queues polled after the third hung read began',
    );
    // ... and none ran past its interval: each waited for the list half its interval at most.
    // Before, every poll that found the list due waited for the read (1.5 s, and again), so each
    // was late and showed its target down.
    const samples = await rig.subject.samples();
    expect(sum(samples, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' })).toBe(0);
    expect(sum(samples, 'trunk_exporter_target_up')).toBe(2);
  });
});
