import { createHash } from 'node:crypto'
import { memoizeByName } from '../../memoize-by-name.ts'

/**
 * Claude Code's `metadata.user_id` carries its device id (and account): the session is named by a
 * digest of it, stable across replicas, so logs, /ctxgate/sessions and the page never show the value.
 */
export function userIdDigest(userId: string): string {
  // A client sends the same id on every request: a hash object per request was 3 % of a large request's hook.
  return userId.length <= rememberedIdMaxChars ? rememberedDigest(userId) : digestOf(userId)
}

/** Ids longer than this are hashed each time, so the memo holds at most 256 × 512 characters. */
const rememberedIdMaxChars = 512
const rememberedDigest = memoizeByName(digestOf, 256)

function digestOf(userId: string): string {
  return `u-${createHash('sha256').update(userId).digest('hex').slice(0, 16)}`
}
