import type { ApplyConfig } from '../config/liveConfig.js';
import type { Logger } from '../log/logger.js';
import { settingChanged } from '../reload/configChanges.js';
import type { BasicAuthVerifier } from './basicAuth.js';
import { requestTimeoutMsFor, type RunningHttpServer } from './httpServer.js';
import { checkOpenFileLimit } from './openFileLimit.js';

/**
 * The running server's apply step: users, the connection caps, the request timeout a webhook body
 * deadline needs and a renewed certificate take effect at once (the address, port and TLS on or off
 * wait for a restart), and the open-file limit is checked against the new caps.
 */
export function applyServerSettings(
  http: RunningHttpServer,
  auth: BasicAuthVerifier,
  logger: Logger,
): ApplyConfig {
  return (next, previous) => {
    if (next.server.tls && settingChanged(previous, next, 'server.tls')) {
      http.updateTls(next.server.tls);
    }
    auth.setUsers(next.server.basicAuthUsers);
    http.setMaxConnections(next.server.maxConnections);
    http.setMaxConnectionsPerAddress(next.server.maxConnectionsPerAddress);
    http.setMaxTlsConnectionsPerAddressPerSecond(next.server.maxTlsConnectionsPerAddressPerSecond);
    http.setRequestTimeout(requestTimeoutMsFor(next.webhooks.bodyTimeoutSeconds));
    checkOpenFileLimit(
      {
        maxConnections: next.server.maxConnections,
        maxConcurrentRequests: next.trunk.maxConcurrentRequests,
      },
      logger,
    );
  };
}
