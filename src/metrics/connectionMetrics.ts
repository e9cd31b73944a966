import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import { NAMESPACE, fqName } from './naming.js';

const TLS_CONNECTIONS_RATE_LIMITED = fqName(
  NAMESPACE,
  'exporter',
  'tls_connections_rate_limited',
  'total',
);

/** What the HTTP server reports about the connections it turns away. */
export interface ConnectionObserver {
  /** A new TLS connection closed unread: its address opened more than its rate allows. */
  tlsConnectionRateLimited(): void;
}

/**
 * Registers the counter of TLS connections closed for their address's rate, present from the first
 * scrape at 0 when the server speaks TLS and absent when it does not (TLS on or off waits for a
 * restart), and returns what feeds it.
 */
export function registerConnectionMetrics(registry: Registry, tls: boolean): ConnectionObserver {
  if (!tls) return { tlsConnectionRateLimited() {} };
  const rateLimited = new Counter({
    name: TLS_CONNECTIONS_RATE_LIMITED,
    help:
      'New TLS connections closed before their handshake because their client address opened more ' +
      'than server.maxTlsConnectionsPerAddressPerSecond (with a burst of twice that).',
    registers: [registry],
  });
  return {
    tlsConnectionRateLimited() {
      rateLimited.inc();
    },
  };
}
