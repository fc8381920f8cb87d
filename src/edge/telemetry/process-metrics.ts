// A few process gauges, read at scrape time. Not prom-client's collectDefaultMetrics: its GC histogram observes
// every garbage collection (a PerformanceObserver on 'gc'), which alone cost streamed requests ~10% of the
// gateway's throughput in `npm run bench -- telemetry`; these cost nothing between scrapes.
import { Counter, Gauge, type Registry } from 'prom-client';

export function registerProcessMetrics(registry: Registry, prefix: string): void {
  const registers = [registry];
  new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'User and system CPU time of the process, in seconds.',
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  new Gauge({
    name: `${prefix}process_resident_memory_bytes`,
    help: 'Resident set size of the process, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: `${prefix}nodejs_heap_used_bytes`,
    help: 'V8 heap in use, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
  const started = Date.now() / 1000 - process.uptime();
  new Gauge({
    name: `${prefix}process_start_time_seconds`,
    help: 'When the process started, in Unix seconds.',
    registers,
    collect() {
      this.set(Math.round(started));
    },
  });
}
