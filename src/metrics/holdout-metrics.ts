import { Gauge, type Registry } from 'prom-client'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { compareArms, type KindComparison } from '../session/holdout-compare.ts'

/** Kinds exported at most, the most sessions first: the label stays bounded whatever clients send. */
const kindsExported = 20

/**
 * The holdout's comparison per session kind, computed from finished sessions at each scrape (the
 * same figures as /ctxgate/sessions): sessions per arm, the median session's billed input, the saving.
 */
export function registerHoldoutMetrics(
  registry: Registry,
  sessions: SessionTotalsStore,
  options: { readonly finishedAfterMs: number; readonly read: number },
): void {
  let latest: Promise<KindComparison[]> | undefined
  const comparison = (): Promise<KindComparison[]> => {
    // The three gauges of one scrape share one read of the store.
    latest ??= sessions
      .list(options.read)
      .then((list) => largest(compareArms(list, Date.now(), options.finishedAfterMs)))
      .catch(() => [])
      .finally(() => setImmediate(() => (latest = undefined)))
    return latest
  }
  new Gauge({
    name: 'ctxgate_holdout_sessions',
    help: 'Finished sessions per holdout arm and session kind (docs/holdout.md).',
    labelNames: ['kind', 'arm'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const kind of await comparison())
        for (const arm of ['control', 'treated'] as const) this.set({ kind: kind.kind, arm }, kind[arm].sessions)
    },
  })
  new Gauge({
    name: 'ctxgate_holdout_median_billed_input_tokens',
    help: 'Billed-equivalent input tokens of the median finished session, per holdout arm and session kind.',
    labelNames: ['kind', 'arm'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const kind of await comparison())
        for (const arm of ['control', 'treated'] as const) {
          const value = kind[arm].medianBilledTokens
          if (value !== null) this.set({ kind: kind.kind, arm }, value)
        }
    },
  })
  new Gauge({
    name: 'ctxgate_holdout_saving_ratio',
    help: '1 - treated median / control median of billed input per session, with its 95% interval bounds; absent until each arm has 6 finished sessions.',
    labelNames: ['kind', 'bound'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const kind of await comparison()) {
        if (!kind.saving) continue
        this.set({ kind: kind.kind, bound: 'median' }, kind.saving.median)
        this.set({ kind: kind.kind, bound: 'low' }, kind.saving.interval[0])
        this.set({ kind: kind.kind, bound: 'high' }, kind.saving.interval[1])
      }
    },
  })
}

function largest(kinds: KindComparison[]): KindComparison[] {
  return kinds
    .toSorted((a, b) => b.control.sessions + b.treated.sessions - (a.control.sessions + a.treated.sessions))
    .slice(0, kindsExported)
}
