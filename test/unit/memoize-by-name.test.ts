import { describe, expect, it } from 'vitest'
import { memoizeByName } from '../../src/memoize-by-name.ts'

describe('memoizeByName', () => {
  it('computes once per name, remembers undefined answers too, and keeps at most `limit` names', () => {
    const computed: string[] = []
    const lookup = memoizeByName((name) => {
      computed.push(name)
      return name === 'none' ? undefined : name.length
    }, 2)
    expect([lookup('ab'), lookup('ab'), lookup('none'), lookup('none')]).toEqual([2, 2, undefined, undefined])
    expect(computed).toEqual(['ab', 'none'])
    lookup('xyz')
    // Full at the third name: everything was dropped, so 'ab' is computed again.
    lookup('ab')
    expect(computed).toEqual(['ab', 'none', 'xyz', 'ab'])
  })
})
