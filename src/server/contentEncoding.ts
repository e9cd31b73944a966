/**
 * True when an Accept-Encoding header admits gzip, by name or through `*`, with a q-value above 0.
 * Prometheus sends `Accept-Encoding: gzip`; curl and browsers list it among others.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let gzipQuality: number | undefined;
  let anyQuality: number | undefined;
  for (const part of header.split(',')) {
    const [coding = '', ...parameters] = part.split(';').map((piece) => piece.trim());
    let quality = 1;
    for (const parameter of parameters) {
      const match = /^q\s*=\s*(.*)$/i.exec(parameter);
      if (match === null) continue;
      const parsed = Number(match[1]);
      quality = match[1] !== '' && Number.isFinite(parsed) ? parsed : 0;
    }
    const name = coding.toLowerCase();
    if (name === 'gzip' || name === 'x-gzip') gzipQuality = quality;
    else if (name === '*') anyQuality = quality;
  }
  // An explicit gzip entry overrides the wildcard, so `*, gzip;q=0` refuses gzip.
  return (gzipQuality ?? anyQuality ?? 0) > 0;
}
