import { Calibration, type FactorInputs } from './calibration.ts'

/**
 * What the pipeline reads of the calibration, as it was when the snapshot was taken: a plan made
 * elsewhere (a worker thread) or later (after dispatch) sizes the request as it would have been sized then.
 */
export class CalibrationSnapshot extends Calibration {
  readonly #limit: number | undefined
  readonly #inputs: FactorInputs

  constructor(limit: number | undefined, inputs: FactorInputs) {
    super()
    this.#limit = limit
    this.#inputs = inputs
  }

  override limit(): number | undefined {
    return this.#limit
  }

  override factorInputs(): FactorInputs {
    return this.#inputs
  }
}
