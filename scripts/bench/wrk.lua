-- Prints wrk's summary as one JSON line, so the benchmarks can read it without parsing its table.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationMicros":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,' ..
    '"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Micros":%d,"p99Micros":%d,"maxMicros":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(99), latency.max))
end
