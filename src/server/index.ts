export { createHttpApp } from './app.js';
export type { HttpAppOptions, ReloadEndpoint } from './app.js';
export { BasicAuthVerifier, bcryptCostWarning } from './basicAuth.js';
export { startHttpServer } from './httpServer.js';
export type { ConnectionLimits, RunningHttpServer } from './httpServer.js';
export { checkOpenFileLimit } from './openFileLimit.js';
export { applyServerSettings } from './serverSettings.js';
