import { conversationMargin, defaultFactor, type FactorInputs } from './calibration.ts'

/**
 * No factor `factorFrom` gives these inputs is larger, whatever the request's size or reference
 * count: what a check that must hold before the request is sized can use (nothing-to-decide.ts).
 * The blend of two factors at most the prior can round one part in 10^16 above it: the ceiling allows 10^-9.
 */
export function factorCeiling({ modelWide, own }: FactorInputs): number {
  if (!own) return modelWide
  const known = (own.ratios[own.ratios.length - 1] ?? modelWide) * conversationMargin
  return Math.max(known, modelWide, defaultFactor) * (1 + 1e-9)
}
