import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Checks a presented secret against the configured ones in constant time: both sides are hashed to
 * the same length first, and every configured token is compared, match or not.
 */
export function createTokenCheck(tokens: readonly string[]): (presented: string | undefined) => boolean {
  const digests = tokens.map(digest)
  return (presented) => {
    if (presented === undefined) return false
    const candidate = digest(presented)
    let matched = false
    for (const known of digests) matched = timingSafeEqual(known, candidate) || matched
    return matched
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
