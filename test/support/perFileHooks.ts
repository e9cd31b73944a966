// Run before every test file (vitest.config.ts, setupFiles): the hooks each file needs. Test
// files share their worker's modules (isolate: false), so a support module evaluates once per
// worker and a hook it registered on import would hold for the first file that imported it only.
import { afterEach } from 'vitest';
import { runAfterTest } from './afterTest.js';

afterEach(runAfterTest);
