// The process's signals, listened to from the moment the command starts. Without a listener Node
// leaves SIGHUP, SIGTERM and SIGINT to their default action, which kills the process at once: a
// SIGHUP sent as soon as the exporter logs its URL (while start-up is still returning) would end
// it instead of reloading it.

/** Signals that end the process gracefully. */
export type StopSignal = 'SIGTERM' | 'SIGINT';

/** What the process has been told, and a way to hear SIGHUP once there is something to reload. */
export interface ProcessSignals {
  /** Resolves with the first SIGTERM or SIGINT, even one received during start-up. */
  readonly stopRequested: Promise<StopSignal>;
  /** Calls `reload` on every SIGHUP from now on, and once at once if one came during start-up. */
  onHangup(reload: () => void): void;
  /** Stops listening (the default actions apply again). */
  dispose(): void;
}

/** Starts listening to SIGTERM, SIGINT and SIGHUP. */
export function listenToProcessSignals(): ProcessSignals {
  let hangupPending = false;
  let reload: (() => void) | undefined;
  const onHangup = (): void => {
    if (reload) reload();
    else hangupPending = true;
  };
  let onStop: ((signal: StopSignal) => void) | undefined;
  const stopRequested = new Promise<StopSignal>((resolve) => {
    onStop = resolve;
  });
  const onTerm = (): void => onStop?.('SIGTERM');
  const onInt = (): void => onStop?.('SIGINT');
  process.on('SIGHUP', onHangup);
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  return {
    stopRequested,
    onHangup(next) {
      reload = next;
      if (hangupPending) {
        hangupPending = false;
        next();
      }
    },
    dispose() {
      process.off('SIGHUP', onHangup);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
    },
  };
}
