import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests one connection may send in one burst, before it could have read any answer; a
 * connection that sends more is closed. Scrapers, probes, browsers and Svix wait for each answer
 * (none pipelines), so this only meets a client that sends requests it never reads, each of which
 * would otherwise be rendered and held until the client reads it.
 */
export const MAX_PIPELINED_REQUESTS = 16;

/**
 * Wraps `listener` so that a connection's requests beyond MAX_PIPELINED_REQUESTS in one burst
 * close it instead of reaching the app.
 */
export function limitPipelinedRequests(listener: RequestListener): RequestListener {
  // Node.js parses every request of one read in the same turn of the event loop, so the requests a
  // connection sent in one turn are the ones it sent without waiting for an answer.
  const burst = new Map<Socket, number>();
  let clearScheduled = false;
  const clear = (): void => {
    burst.clear();
    clearScheduled = false;
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    // The rest of a read that closed its connection is still parsed; it costs no more than this.
    if (socket.destroyed) return;
    const sent = (burst.get(socket) ?? 0) + 1;
    burst.set(socket, sent);
    if (!clearScheduled) {
      clearScheduled = true;
      setImmediate(clear);
    }
    if (sent > MAX_PIPELINED_REQUESTS) {
      ignoreRestOfRead(socket);
      socket.destroy();
      return;
    }
    listener(req, res);
  };
}

/** Node.js's HTTP parser of a server connection (`socket.parser`, undocumented). */
interface ParsedSocket {
  parser?: { onIncoming: unknown } | null;
}

/**
 * Makes the requests still to be parsed from this read end at their headers. Node.js goes on
 * parsing the read after the socket is destroyed, and each request it hands on gets a response
 * that waits for the socket, then two errors with stack traces when it closes: for a read full of
 * small requests that costs more than answering them would.
 */
function ignoreRestOfRead(socket: Socket): void {
  const { parser } = socket as Socket & ParsedSocket;
  // 0 tells the parser to read the message on (a body is parsed and dropped), as Node.js's own does.
  if (parser && typeof parser.onIncoming === 'function') parser.onIncoming = () => 0;
}
