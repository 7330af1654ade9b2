import { createHash } from 'node:crypto'

/**
 * A stable, non-secret name for the client behind an `x-ctxgate-auth` token: the first 16 hex
 * digits of a SHA-256 over a fixed label and the token. The same on every replica (so shared
 * state stays shared), and the token itself never appears in a key, a log line or an endpoint.
 */
export function tenantOf(token: string): string {
  return createHash('sha256').update('ctxgate-tenant\0').update(token).digest('hex').slice(0, 16)
}
