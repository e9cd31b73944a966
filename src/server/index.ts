export { createHttpApp } from './app.js';
export type { HttpAppOptions } from './app.js';
export { startHttpServer } from './httpServer.js';
export type { RunningHttpServer } from './httpServer.js';
