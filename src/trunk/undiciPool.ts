// undici's connection pool, loaded on its own. undici's main entry loads all of undici (fetch,
// WebSocket, mock agents, caches, proxies) for one class: in a bare process that is about 12 MB
// more RSS and 3 MB more heap, for code the exporter never runs. The path is undici's own
// CommonJS module (the package has no `exports` map); the types are its public ones.
// package-lock.json pins the version, and test/trunk runs this pool over real sockets.
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

const require = createRequire(import.meta.url);

export const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
export type Pool = UndiciPool;
