import { memoizeByName } from '../memoize-by-name.ts'

/**
 * Per-model correction of the estimator from the prompt sizes the upstream reports (DESIGN §3.2).
 * The factor is the largest recent actual ÷ estimate ratio, so a budget check never trusts an
 * estimate that has been seen to undercount.
 */
const window = 64
/** Until a model has reported back, assume the estimate may be this far low. */
export const defaultFactor = 1.15

/** Where replicas share what they learned (a store implements it; without one, learning stays local). */
export interface CalibrationSync {
  load(family: string): Promise<{ readonly ratios: readonly number[]; readonly limit?: number } | undefined>
  pushRatio(family: string, ratio: number, keep: number): Promise<void>
  pushLimit(family: string, limit: number): Promise<void>
}

export class Calibration {
  readonly #ratios = new Map<string, number[]>()
  readonly #limits = new Map<string, number>()
  readonly #sync: CalibrationSync | undefined

  constructor(sync?: CalibrationSync) {
    this.#sync = sync
  }

  /** Takes in what other replicas learned about this model; a no-op without a shared store. */
  async refresh(model: string): Promise<void> {
    if (!this.#sync) return
    const family = modelFamily(model)
    const shared = await this.#sync.load(family)
    if (!shared) return
    if (shared.ratios.length > 0) this.#ratios.set(family, [...shared.ratios])
    if (shared.limit !== undefined) this.#limits.set(family, shared.limit)
  }

  /** The upstream named its real prompt limit for this model (in a length refusal). */
  async recordLimit(model: string, limit: number): Promise<void> {
    if (limit <= 0) return
    this.#limits.set(modelFamily(model), limit)
    await this.#sync?.pushLimit(modelFamily(model), limit)
  }

  limit(model: string): number | undefined {
    return this.#limits.get(modelFamily(model))
  }

  async record(model: string, estimated: number, actual: number): Promise<void> {
    if (estimated <= 0 || actual <= 0) return
    const family = modelFamily(model)
    const ratios = this.#ratios.get(family) ?? []
    ratios.push(actual / estimated)
    if (ratios.length > window) ratios.shift()
    this.#ratios.set(family, ratios)
    await this.#sync?.pushRatio(family, actual / estimated, window)
  }

  factor(model: string): number {
    const ratios = this.#ratios.get(modelFamily(model))
    if (!ratios || ratios.length === 0) return defaultFactor
    return Math.max(...ratios) * 1.02
  }

  samples(model: string): number {
    return this.#ratios.get(modelFamily(model))?.length ?? 0
  }
}

/** Dated snapshots share a tokenizer with their family: claude-sonnet-4-5-20250929 → claude-sonnet-4-5. */
export const modelFamily = memoizeByName((model) => model.replace(/-(\d{8}|latest)$/, '').replace(/@.*$/, ''))
