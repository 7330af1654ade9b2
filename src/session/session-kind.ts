import { modelFamily } from '../providers/model-family.ts'
import { hashText } from '../rewrite/hash.ts'

/**
 * What finished sessions are grouped by: the same agent (see `agentFingerprint`) on the same model
 * family, within one tenant when clients authenticate, else one pool for all (as calibration shares
 * its ratios). Bounded in length whatever the client sent.
 */
export function sessionKind(limitScope: string, model: string, agent: string): string {
  const scope = limitScope.startsWith('tenant:') ? limitScope : 'shared'
  return `${scope}/${hashText(`${modelFamily(model)}\u0000${agent}`, 4)}`
}
