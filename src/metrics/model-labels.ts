import { memoizeByName } from '../memoize-by-name.ts'
import { modelFamily } from '../providers/model-family.ts'

/** Distinct model label values kept; later ones count as "other", so cardinality stays bounded. */
export const maxModelLabels = 50

/** Model names as labels: the family (dated snapshots merged), a safe charset, and at most maxModelLabels distinct values. */
export class ModelLabels {
  readonly #seen = new Set<string>()
  readonly #cap: number
  /** The regexes run once per raw name, not on every request. */
  readonly #labelOf = memoizeByName((model) => this.#label(model))

  constructor(cap = maxModelLabels) {
    this.#cap = cap
  }

  of(model: string | undefined): string {
    return model ? this.#labelOf(model) : 'unknown'
  }

  #label(model: string): string {
    const family = modelFamily(model)
      .toLowerCase()
      .replace(/[^a-z0-9._:/-]/g, '_')
      .slice(0, 64)
    if (this.#seen.has(family)) return family
    if (this.#seen.size >= this.#cap) return 'other'
    this.#seen.add(family)
    return family
  }
}
