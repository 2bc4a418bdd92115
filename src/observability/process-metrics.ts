// The standard process and Node.js metrics from prom-client (process_cpu_seconds_total,
// process_resident_memory_bytes, process_start_time_seconds, nodejs_eventloop_lag_seconds,
// nodejs_heap_size_used_bytes, nodejs_gc_duration_seconds, ...) under their usual names: Node.js
// dashboards and alerts look for those names, and process_* is what every Prometheus client library
// exports. HomeClaw's own metrics carry the homeclaw_ prefix instead.
//
// They describe the process, not a Core, and prom-client's collectors (an event-loop delay histogram, a
// garbage-collection observer) cannot be stopped once started: one registry per process serves every
// Core started in it (tests start many).
import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | undefined;

export function processMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
