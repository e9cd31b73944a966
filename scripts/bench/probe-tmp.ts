import { startSimulatorProcess, startExporterProcess, freePort } from './processes.ts';
import { configYaml } from './scale.ts';
import { runWrk } from './wrk.ts';
const scale = { queues: 100, pullRequestsPerQueue: 30, flakyRepositories: 0, quarantinedTests: 0 };
const sim = await startSimulatorProcess({ scale, flavour: 'live', latencyMs: 0, churn: 'normal' });
const ex = await startExporterProcess(
  configYaml(scale, {
    apiUrl: sim.baseUrl,
    port: await freePort(),
    maxConcurrentRequests: 16,
    maxRequestsPerSecond: 10000,
    mergeQueueIntervalSeconds: 86400,
    flakyTestsIntervalSeconds: 86400,
  }),
  ['--cpu-prof', '--cpu-prof-dir=/tmp/eprof'],
);
console.log(
  await runWrk({
    url: `${ex.url}/metrics`,
    connections: 16,
    seconds: 5,
    headers: { 'Accept-Encoding': 'gzip' },
  }),
);
await ex.stop();
await sim.stop();
