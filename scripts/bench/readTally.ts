// Which declared API v2 read (src/poller/v2/v2Reads.ts) made each call of a benchmark, and the table
// of them: the client's one-page call (TrunkClient.readV2) is wrapped, and each call counted for the
// read whose module is nearest the call on its stack (awaiting frames included), as each read is
// made by one module.
import type * as V2Reads from '../../src/poller/v2/v2Reads.js';
import type * as Client from '../../src/trunk/client.js';

type Reads = typeof V2Reads;

/** The module that makes each read, as the file the build names on a stack, by read. */
function readModules(reads: Reads): readonly (readonly [file: string, read: string])[] {
  return [
    ['/v2MergeQueuePoll.js', reads.LIVE_PULL_REQUESTS.name],
    ['/v2QueueDirectory.js', reads.QUEUE_LIST.name],
    ['/v2ExitLookup.js', reads.CONCLUDED_ENTRIES.name],
    ['/v2Resubmissions.js', reads.RESUBMITTED_ENTRIES.name],
    ['/v2LastMerge.js', reads.LAST_MERGE.name],
    ['/v2TestingResultsRead.js', reads.TESTING_RESULTS.name],
    ['/v2VerificationRunsRead.js', reads.VERIFICATION_RUNS.name],
    ['/v2QueueEntryHistoryRead.js', reads.QUEUE_ENTRY_HISTORY.name],
  ];
}

/** A call no read module was found for (counted, so that the table still adds up). */
export const UNATTRIBUTED = 'unattributed';

/** The calls each read made since the last reset, and the pull requests the histories asked for. */
export interface ReadTally {
  /** Calls by read name. */
  readonly calls: () => Readonly<Record<string, number>>;
  /** Pull request ids asked for by the queue-entry history calls. */
  readonly historyIds: () => number;
  readonly reset: () => void;
}

/** Counts each `readV2` call of `client` for the read that made it, from now on. */
export function tallyReads(client: Client.TrunkClient, reads: Reads): ReadTally {
  const modules = readModules(reads);
  let calls: Record<string, number> = {};
  let historyIds = 0;
  const original = client.readV2.bind(client);
  // Deep enough for the client's frames, the paging, the read and the poll above it.
  Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 40);
  const counted: typeof client.readV2 = (target, path, ...rest) => {
    const read = readOf(new Error().stack ?? '', modules, path, reads);
    calls[read] = (calls[read] ?? 0) + 1;
    if (read === reads.QUEUE_ENTRY_HISTORY.name) {
      const ids = new URLSearchParams(path.split('?')[1]).get('pullRequestIds') ?? '';
      historyIds += ids.split(',').filter((id) => id !== '').length;
    }
    return original(target, path, ...rest);
  };
  client.readV2 = counted;
  return {
    calls: () => ({ ...calls }),
    historyIds: () => historyIds,
    reset: () => {
      calls = {};
      historyIds = 0;
    },
  };
}

/**
 * The read whose module is nearest the call on `stack`; else the one read whose endpoint `path` is:
 * a call made after a timer (the histories' spacing) has no async stack above the timer.
 */
function readOf(
  stack: string,
  modules: ReturnType<typeof readModules>,
  path: string,
  reads: Reads,
): string {
  for (const line of stack.split('\n')) {
    const found = modules.find(([file]) => line.includes(file));
    if (found !== undefined) return found[1];
  }
  // The client's paths are relative to the API's `v2/` (`queue-entry-history?…`).
  const endpoint = `v2/${path.split('?')[0] ?? ''}`;
  const byEndpoint = Object.values(reads).filter(
    (read) =>
      typeof read === 'object' &&
      'endpoints' in read &&
      (read.endpoints as readonly string[]).includes(endpoint),
  );
  const [only] = byEndpoint;
  return byEndpoint.length === 1 && only !== undefined ? only.name : UNATTRIBUTED;
}

/** What a benchmark measured of its API v2 calls, per steady-state cycle. */
export interface MeasuredReads {
  readonly queues: number;
  /** Calls counted at the simulator. */
  readonly total: number;
  /** Calls by read name (ReadTally). */
  readonly byRead: Readonly<Record<string, number>>;
  /** Pull requests the queue-entry histories asked for. */
  readonly historyIds: number;
  readonly cycles: number;
  readonly intervalSeconds: number;
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);

/**
 * The v2 calls by read (each as its module made them, readTally.ts), each read's share, and the
 * calls per queue without each read a setting turns off: no read's trigger reads another's answer,
 * so turning one off takes away its calls and no other's.
 */
export function readTable(reads: Reads, v2: MeasuredReads): string[] {
  const { cycles } = v2;
  const settings = new Map<string, string>([
    [reads.VERIFICATION_RUNS.name, 'reads.verificationRuns'],
    [reads.QUEUE_ENTRY_HISTORY.name, 'reads.queueEntryHistory'],
  ]);
  const declared = [
    reads.QUEUE_LIST,
    reads.LIVE_PULL_REQUESTS,
    reads.CONCLUDED_ENTRIES,
    reads.RESUBMITTED_ENTRIES,
    reads.TESTING_RESULTS,
    reads.VERIFICATION_RUNS,
    reads.QUEUE_ENTRY_HISTORY,
  ];
  const total = Object.values(v2.byRead).reduce((sum, count) => sum + count, 0);
  const perQueue = (count: number) => count / v2.queues;
  const rows = declared.map((read) => {
    const calls = v2.byRead[read.name] ?? 0;
    const setting = settings.get(read.name);
    const off =
      setting === undefined ? '' : `\`${setting}: false\`: ${fixed(perQueue(total - calls))}`;
    return `| ${read.name} | \`${read.endpoints.join('`, `')}\` | ${fixed(calls, 1)} | ${fixed(perQueue(calls), 3)} | ${fixed((100 * calls) / total, 1)} % | ${off} |`;
  });
  const unattributed = Object.entries(v2.byRead).filter(
    ([read]) => !declared.some((declaration) => declaration.name === read),
  );
  const share = (read: { readonly name: string }) => fixed(perQueue(v2.byRead[read.name] ?? 0), 3);
  const changedPerQueueHour = (v2.historyIds / v2.queues) * (3600 / v2.intervalSeconds);
  return [
    `By read (${cycles} cycles; each read's calls counted where its module made them, ${fixed(total, 1)} in all against ${fixed(v2.total, 1)} counted at the simulator):`,
    '',
    '| read | endpoint | calls per cycle | per queue per cycle | share of v2 calls | v2 calls per queue per cycle with it off |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    ...unattributed.map(
      ([read, calls]) => `| ${read} | | ${fixed(calls, 1)} | ${fixed(perQueue(calls), 3)} | | |`,
    ),
    '',
    `Reads per queue poll, as the budget assumes them (\`BUDGET_ASSUMPTIONS\`, src/poller/readCost.ts): concluded entries ${share(reads.CONCLUDED_ENTRIES)} (\`exitReadsPerQueuePoll\`), testing results ${share(reads.TESTING_RESULTS)} (\`testingReadsPerQueuePoll\`), verification runs ${share(reads.VERIFICATION_RUNS)} (\`verificationRunReadsPerQueuePoll\`); the queue-entry histories asked for ${fixed(changedPerQueueHour, 1)} pull requests per queue per hour (\`pullRequestsPerQueue\` × \`stateChangesPerPullRequestPerHour\`).`,
  ];
}
