import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { requestTargetProblem } from '../../src/forward/request-target.ts'

/** The check as first written, decoding every path: the shortcut for paths with nothing to decode must agree. */
function referenceHasDotSegment(target: string): boolean {
  const query = target.indexOf('?')
  const path = query === -1 ? target : target.slice(0, query)
  const decoded = path.replace(/%2e/gi, '.').replace(/%2f|%5c|\\/gi, '/')
  return decoded.split('/').some((segment) => segment === '.' || segment === '..')
}

describe('requestTargetProblem', () => {
  it('refuses dot segments, raw or encoded, and passes model paths', () => {
    expect(requestTargetProblem('/v1/messages?beta=true')).toBeUndefined()
    expect(requestTargetProblem('/v1/../admin')).toContain('segments')
    expect(requestTargetProblem('/v1/%2E%2e/admin')).toContain('segments')
    expect(requestTargetProblem('/v1\\..\\admin')).toContain('segments')
    expect(requestTargetProblem('/v1/a%2f..%5cadmin')).toContain('segments')
    expect(requestTargetProblem('/v1/file.json')).toBeUndefined()
    expect(requestTargetProblem('http://evil/v1/messages')).toContain('origin-form')
  })

  it('finds a dot segment exactly where decoding every path would', () => {
    const piece = fc.constantFrom(
      'v1',
      'messages',
      '.',
      '..',
      '%2e',
      '%2E',
      '%2f',
      '%5C',
      '\\',
      'a.b',
      '%',
      '?',
      '/',
      'x',
    )
    const target = fc.array(piece, { maxLength: 8 }).map((pieces) => `/${pieces.join('')}`)
    fc.assert(
      fc.property(target, (sent) => {
        expect(requestTargetProblem(sent) !== undefined).toBe(referenceHasDotSegment(sent))
      }),
      { numRuns: 2000 },
    )
  })
})
