// Discovery's reads against a reload that comes while one is in flight. configuration.md:
// discovered queues "become targets at start and every `intervalSeconds`"; operations.md: a valid
// reload "takes effect at once". A reload with the same discovery settings changes nothing, so the
// read in flight is still the one that makes the targets.
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_DISCOVERY_MAX_TARGETS } from '../../src/config/schema.js';
import type { DiscoverySettings, RepositoryTarget } from '../../src/config/types.js';
import { TargetDiscovery } from '../../src/discovery/targetDiscovery.js';
import { silentLogger } from '../../src/log/logger.js';
import type { V2QueueKey } from '../../src/poller/v2/v2QueueDirectory.js';
import { capturingLogger } from '../trunk/harness.js';

const SETTINGS: DiscoverySettings = {
  enabled: true,
  intervalSeconds: 300,
  repos: ['*'],
  branches: ['*'],
  flakyTests: false,
  maxTargets: DEFAULT_DISCOVERY_MAX_TARGETS,
};

describe('TargetDiscovery', () => {
  it('keeps what a read in flight finds when a reload with the same settings comes before it ends', async () => {
    let answer: (queues: readonly V2QueueKey[]) => void = () => undefined;
    const listQueues = vi.fn(
      () =>
        new Promise<readonly V2QueueKey[]>((resolve) => {
          answer = resolve;
        }),
    );
    const found: (readonly RepositoryTarget[])[] = [];
    let tried = 0;
    const discovery = new TargetDiscovery({
      listQueues,
      listTestRepositories: () => Promise.resolve([]),
      onDiscovered: (repositories) => found.push(repositories),
      onTried: () => (tried += 1),
      observer: { discoveredTargets: () => undefined, discoverySucceeded: () => undefined },
      logger: silentLogger(),
    });
    discovery.configure(SETTINGS);
    await vi.waitFor(() => {
      expect(listQueues).toHaveBeenCalledTimes(1);
    });
    // The reload: the same settings, parsed again into a new object.
    discovery.configure(structuredClone(SETTINGS));
    answer([{ repo: 'github.com/acme/web', branch: 'main' }]);
    await vi.waitFor(() => {
      expect(tried).toBe(1);
    });
    expect(found.map((repositories) => repositories.map(({ name }) => name))).toEqual([
      ['github.com/acme/web'],
    ]);
    await discovery.stop();
  });

  it("makes the queues targets once they are read, before the organization's test lists end", async () => {
    let answerTests: (repositories: readonly string[]) => void = () => undefined;
    const found: string[][] = [];
    const discovery = new TargetDiscovery({
      listQueues: () => Promise.resolve([{ repo: 'github.com/acme/web', branch: 'main' }]),
      listTestRepositories: () =>
        new Promise<readonly string[]>((resolve) => {
          answerTests = resolve;
        }),
      onDiscovered: (repositories) => found.push(repositories.map(({ name }) => name)),
      onTried: () => undefined,
      observer: { discoveredTargets: () => undefined, discoverySucceeded: () => undefined },
      logger: silentLogger(),
    });
    discovery.configure({ ...SETTINGS, flakyTests: true });
    await vi.waitFor(() => {
      expect(found).toEqual([['github.com/acme/web']]);
    });
    answerTests(['github.com/acme/docs']);
    await vi.waitFor(() => {
      expect(found.at(-1)).toEqual(['github.com/acme/web', 'github.com/acme/docs']);
    });
    await discovery.stop();
  });

  it('stops adding repositories found through tests at maxTargets, however many new ones each read names', async () => {
    // Each read of the test lists names five repositories never named before.
    let reads = 0;
    const listTestRepositories = () => {
      reads += 1;
      return Promise.resolve(
        Array.from(
          { length: 5 },
          (_, index) => `github.com/acme/repo-${String(reads)}-${String(index)}`,
        ),
      );
    };
    const found: (readonly RepositoryTarget[])[] = [];
    const { logger, lines } = capturingLogger();
    const discovery = new TargetDiscovery({
      listQueues: () => Promise.resolve([]),
      listTestRepositories,
      onDiscovered: (repositories) => found.push(repositories),
      onTried: () => undefined,
      observer: { discoveredTargets: () => undefined, discoverySucceeded: () => undefined },
      logger,
    });
    discovery.configure({ ...SETTINGS, intervalSeconds: 0.01, flakyTests: true, maxTargets: 3 });
    await vi.waitFor(() => {
      expect(found.length).toBeGreaterThanOrEqual(4);
    });
    await discovery.stop();
    // The first three named are the targets; none found later is held, and the warning counts
    // every one a read named and left out: two of the first read's five, all five of each later.
    expect(found.at(-1)?.map(({ name }) => name)).toEqual([
      'github.com/acme/repo-1-0',
      'github.com/acme/repo-1-1',
      'github.com/acme/repo-1-2',
    ]);
    const counted = lines
      .filter((line) => line.includes('discovery.maxTargets'))
      .map((line) => /discovery found (\d+) targets more/.exec(line)?.[1]);
    expect(counted.slice(0, 3)).toEqual(['2', '5', '5']);
  });
});
