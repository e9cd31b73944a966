/** What the configuration reloader reports; the first load counts as a successful reload. */
export interface ReloadObserver {
  reloadSucceeded(atSeconds: number): void;
  reloadFailed(): void;
}
