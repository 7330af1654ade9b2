import { describe, expect, it } from 'vitest'
import { createSseTap } from '../../src/stream/sse-tap.ts'

describe('createSseTap', () => {
  it('parses events split anywhere, multibyte characters included', () => {
    const seen: { event: string | undefined; data: string }[] = []
    const tap = createSseTap((event) => seen.push({ event: event.event, data: event.data }))
    const bytes = Buffer.from(
      'event: content_block_delta\ndata: {"text":"héllo 世界"}\n\n: comment\r\ndata: two\r\n\r\n',
    )
    for (let index = 0; index < bytes.length; index++) tap.push(bytes.subarray(index, index + 1))
    tap.end()
    expect(seen).toEqual([
      { event: 'content_block_delta', data: '{"text":"héllo 世界"}' },
      { event: undefined, data: 'two' },
    ])
    expect(tap.eventCount).toBe(2)
  })

  it.each([
    ['', true],
    ['data: x\n\n', true],
    ['data: x\r\n\r\n', true],
    ['data: x\r\r', true],
    ['data: x\n', false],
    ['data: x\r\n', false],
    ['data: {"partial', false],
  ])('knows whether %j ends on an event boundary', (text, boundary) => {
    const tap = createSseTap()
    tap.push(Buffer.from(text))
    expect(tap.atEventBoundary).toBe(boundary)
  })

  it('keeps the boundary right when the blank line arrives byte by byte', () => {
    const tap = createSseTap()
    for (const piece of ['data: a', '\r', '\n', '\r', '\n']) tap.push(Buffer.from(piece))
    expect(tap.atEventBoundary).toBe(true)
  })

  it('gives up parsing, without throwing, when one event grows past its limit', () => {
    const tap = createSseTap()
    const huge = Buffer.alloc(1024 * 1024, 'a')
    tap.push(Buffer.from('data: '))
    for (let index = 0; index < 20; index++) tap.push(huge)
    expect(tap.failed).toBe(true)
  })
})
