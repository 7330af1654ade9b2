import { isAscii, isUtf8 } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bodyText } from '../../src/util/body-text.ts'

/** How the hook decoded a body before identical ones were kept (forward/rewrite-hook/read-chat.ts). */
function decodedBefore(bytes: Buffer): string | undefined {
  if (!isUtf8(bytes)) return undefined
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
}

const body = fc.oneof(
  fc.string({ maxLength: 40 }).map((text) => Buffer.from(text)),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => Buffer.from(text)),
  // Not UTF-8 (lone continuation bytes, truncated sequences) as often as not.
  fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes)),
)

describe('decoding a body, identical bodies answered with the string decoded before', () => {
  it('gives what decoding every body gives, for any sequence of bodies with repeats', () => {
    fc.assert(
      fc.property(
        fc.array(body, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(20), { maxLength: 30 }),
        (bodies, order) => {
          for (const pick of [0, ...order]) {
            // Each arrives in its own buffer, as from a socket.
            const bytes = Buffer.from(bodies[pick % bodies.length] as Buffer)
            expect(bodyText(bytes)).toBe(decodedBefore(bytes))
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it("prevents a body of the same length from getting another body's string", () => {
    expect(bodyText(Buffer.from('{"a":1}'))).toBe('{"a":1}')
    expect(bodyText(Buffer.from('{"a":2}'))).toBe('{"a":2}')
    expect(bodyText(Buffer.from('{"a":1}'))).toBe('{"a":1}')
  })
})
