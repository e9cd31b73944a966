import type { RunningExporter } from '../exporter.js';
import type { Logger } from '../log/logger.js';
import { listenToProcessSignals, type ProcessSignals } from './processSignals.js';

/** How long shutdown may take before the process gives up waiting for in-flight work. */
const SHUTDOWN_GRACE_MS = 5000;

/** Something long-running the command line starts: stoppable, and reloadable if it has a config file. */
export type Runnable = Pick<RunningExporter, 'stop'> & Partial<Pick<RunningExporter, 'reload'>>;

/** Starts something long-running; a start-up failure (a port in use…) is one log line and exit 1. */
export async function startThenRun(
  start: () => Promise<Runnable>,
  logger: Logger,
): Promise<number> {
  // A promise rejected with nobody listening is a bug, but one that must not take the metrics
  // of every target down with it: log it and keep serving.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
  // Before start-up: the URL is logged while start() is still returning.
  const signals = listenToProcessSignals();
  let running: Runnable;
  try {
    running = await start();
  } catch (error) {
    signals.dispose();
    logger.fatal(
      { err: error },
      `cannot start: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
  return runUntilSignal(running, signals, logger);
}

/** Keeps running until SIGTERM or SIGINT (reloading on SIGHUP), then stops within the grace period. */
async function runUntilSignal(
  running: Runnable,
  signals: ProcessSignals,
  logger: Logger,
): Promise<number> {
  const { reload } = running;
  if (reload) {
    signals.onHangup(() => {
      // The reloader logs the outcome itself.
      void reload('SIGHUP');
    });
  }
  const signal = await signals.stopRequested;
  // A second SIGTERM or SIGINT during shutdown gets the default action: it ends the process now.
  signals.dispose();
  logger.info({ signal }, 'shutting down');
  // Armed until the process ends, not only until stop() returns: work that stop() cannot end (a
  // bcrypt comparison in its worker thread) would keep the event loop alive past the grace period.
  let stopped = false;
  setTimeout(() => {
    logger.warn(
      stopped
        ? `still running ${SHUTDOWN_GRACE_MS / 1000}s after shutdown began (work in flight); exiting anyway`
        : `shutdown took longer than ${SHUTDOWN_GRACE_MS / 1000}s; exiting anyway`,
    );
    process.exit(0);
  }, SHUTDOWN_GRACE_MS).unref();
  await running.stop();
  stopped = true;
  return 0;
}
