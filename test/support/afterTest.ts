// What a test started and must stop however it ended: support modules hand their servers and
// exporters here, and test/support/perFileHooks.ts runs them after each test. It imports nothing
// else, so the setup file that every test file runs stays cheap.

const pending: (() => Promise<void>)[] = [];

/** Runs `cleanup` after the current test, before what was handed here earlier. */
export function afterThisTest(cleanup: () => Promise<void>): void {
  pending.push(cleanup);
}

/** Runs what the test handed here, the last first: an exporter stops before the API it polls. */
export async function runAfterTest(): Promise<void> {
  for (const cleanup of pending.splice(0).reverse()) await cleanup();
}
