// The floor for any Node.js server of a cached page: a bare node:http server answering every
// request with the page's bytes as they are (no routing, no auth, headers built once), written as
// the exporter writes them (headers and body in one corked writev). The scrape benchmark runs it
// beside the exporter, so the exporter's figure can be read against what Node.js itself manages on
// the same machine at the same moment. Usage: nodeHttpServer.ts <page file> <gzip file>; prints
// "READY <url>".
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [pagePath, gzipPath] = process.argv.slice(2);
if (pagePath === undefined || gzipPath === undefined) {
  throw new Error('usage: nodeHttpServer.ts <page file> <gzip file>');
}
const plain = readFileSync(pagePath);
const gzipped = readFileSync(gzipPath);
const headers = (body: Buffer, gzip: boolean): string[] => [
  'Content-Type',
  'text/plain; version=0.0.4; charset=utf-8',
  'Content-Length',
  String(body.length),
  'Vary',
  'Accept-Encoding',
  ...(gzip ? ['Content-Encoding', 'gzip'] : []),
];
const plainHeaders = headers(plain, false);
const gzipHeaders = headers(gzipped, true);

const server = createServer((req, res) => {
  const gzip = (req.headers['accept-encoding'] ?? '').includes('gzip');
  res.writeHead(200, gzip ? gzipHeaders : plainHeaders);
  res.cork();
  res.write(gzip ? gzipped : plain);
  res.end();
  res.uncork();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  console.log(`READY http://127.0.0.1:${address.port}/metrics`);
});
// A parent killed without stopping this child must not leave it behind.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
