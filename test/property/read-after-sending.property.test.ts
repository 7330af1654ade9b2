import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { readAfterSendingFor } from '../../src/forward/read-after-sending.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { anthropicBody, buildMessages, stepArbitrary } from '../helpers/conversations.ts'
import { createRewriter } from '../helpers/rewrite.ts'

const formats: readonly WireFormat[] = ['anthropic-messages', 'openai-chat', 'openai-responses']

/** Bodies of every kind a client may send: chats well over a small window, other JSON, and bytes that are neither. */
const bodyArbitrary: fc.Arbitrary<Buffer> = fc.oneof(
  fc.array(stepArbitrary, { minLength: 1, maxLength: 6 }).map((steps) => {
    const body = anthropicBody(buildMessages(steps))
    return Buffer.from(JSON.stringify({ ...body, input: body['messages'] }))
  }),
  fc.json().map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
)

const headersArbitrary = fc.oneof(
  fc.constant({}),
  fc.constant({ 'x-ctxgate-mode': 'passthrough' }),
  fc.constant({ 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-ctxgate-debug': '1' }),
)

describe('sending before reading, with rewriting off or passthrough asked', () => {
  const passthrough = { 'x-ctxgate-mode': ' Passthrough ' }

  it('is only asked for when the hook can leave every body as sent: passthrough asked with rewriting on, never for a worker’s body', () => {
    const on = loadConfig({
      overrides: { rewrite: { enabled: true }, rewriteWorkers: { threads: 2, aboveBytes: 1000 } },
    })
    const whenOn = readAfterSendingFor(on, { ownHook: true })
    expect(whenOn?.(999, {})).toBe(false)
    expect(whenOn?.(999, { 'x-ctxgate-mode': 'rewrite' })).toBe(false)
    expect(whenOn?.(999, passthrough)).toBe(true)
    expect(whenOn?.(1000, passthrough)).toBe(false)
    const off = loadConfig({
      overrides: { rewrite: { enabled: false }, rewriteWorkers: { threads: 2, aboveBytes: 1000 } },
    })
    const sendsFirst = readAfterSendingFor(off, { ownHook: true })
    expect(sendsFirst?.(999, {})).toBe(true)
    expect(sendsFirst?.(1000, {})).toBe(false)
    const inline = loadConfig({ overrides: { rewrite: { enabled: false }, rewriteWorkers: { threads: 0 } } })
    expect(readAfterSendingFor(inline, { ownHook: true })?.(64 * 1024 * 1024, {})).toBe(true)
    expect(readAfterSendingFor(inline, { ownHook: false })).toBeUndefined()
    expect(readAfterSendingFor(on, { ownHook: false })).toBeUndefined()
  })

  // What makes sending first safe: the bytes and headers it sends are those the hook would have sent,
  // and the hook never refuses. A window of 2,000 tokens puts most chats over budget, so a hook that
  // rewrote with rewriting off would show here.
  it('leaves every body as sent, adds no header and never refuses, for each chat format', async () => {
    const settings = [
      { config: { rewrite: { enabled: false } }, headers: headersArbitrary },
      { config: { rewrite: { enabled: true } }, headers: fc.constant(passthrough) },
    ]
    for (const format of formats)
      for (const { config, headers: headersOf } of settings) {
        const rewrite = createRewriter(format, 2_000, config)
        await fc.assert(
          fc.asyncProperty(bodyArbitrary, headersOf, async (body, headers) => {
            const result = await rewrite.raw(body, headers)
            expect(result.kind).toBe('forward')
            if (result.kind !== 'forward') return
            expect(result.prepared.body.equals(body)).toBe(true)
            expect(result.prepared.headers ?? {}).toEqual({})
            expect(result.prepared.hideUsageChunk ?? false).toBe(false)
            expect(result.prepared.followUp?.replannable ?? false).toBe(false)
          }),
          { numRuns: 60 },
        )
      }
  })
})
