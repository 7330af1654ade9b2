import { Counter, Gauge, type Registry } from 'prom-client'
import type { LiveEventStreams, StreamEvents } from './event-stream.ts'

/** The /ctxgate/events streams in Prometheus: how many are open, what waits for them, refusals and cuts. */
export function registerStreamMetrics(
  registry: Registry,
  streams: () => LiveEventStreams | undefined,
  budgetBytes: number,
): StreamEvents {
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_live_streams',
      help: 'Open /ctxgate/events streams.',
      registers: [],
      collect() {
        this.set(streams()?.size ?? 0)
      },
    }),
  )
  registry.registerMetric(
    new Gauge({
      name: 'ctxgate_live_buffered_bytes',
      help: 'Bytes written to /ctxgate/events streams and not yet taken by their readers (each stream counted in full).',
      registers: [],
      collect() {
        this.set(streams()?.bufferedBytes() ?? 0)
      },
    }),
  )
  const budget = new Gauge({
    name: 'ctxgate_live_buffered_bytes_budget',
    help: 'The configured ceiling on ctxgate_live_buffered_bytes (live.maxBufferedBytes).',
    registers: [registry],
  })
  budget.set(budgetBytes)
  const refused = new Counter({
    name: 'ctxgate_live_streams_refused_total',
    help: '/ctxgate/events opens refused with 503: every slot taken (full) or the memory budget reached (memory).',
    labelNames: ['reason'],
    registers: [registry],
  })
  const cut = new Counter({
    name: 'ctxgate_live_streams_cut_total',
    help: '/ctxgate/events streams ended by ctxgate: nothing but heartbeats for live.idleTimeoutMs (idle), a reader too slow (slow), or over the memory budget (memory).',
    labelNames: ['reason'],
    registers: [registry],
  })
  return { refused: (reason) => refused.inc({ reason }), cut: (reason) => cut.inc({ reason }) }
}
