import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { userIdDigest } from '../../src/providers/anthropic/user-id-digest.ts'

const hashedNow = (userId: string) => `u-${createHash('sha256').update(userId).digest('hex').slice(0, 16)}`

describe('the user id digest', () => {
  it('prevents a remembered digest from differing from a fresh hash: ids short and long, again and after the memo fills', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ minLength: 500, maxLength: 700 })), {
          minLength: 1,
          maxLength: 300,
        }),
        (ids) => {
          for (const id of [...ids, ...ids]) expect(userIdDigest(id)).toBe(hashedNow(id))
        },
      ),
      { numRuns: 30 },
    )
  })
})
