import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ctxgateAttributes } from '../../src/telemetry/ctxgate-attributes.ts'
import { errorTypeOf, genAiAttributes } from '../../src/telemetry/genai-attributes.ts'
import { openInferenceAttributes } from '../../src/telemetry/openinference-attributes.ts'
import { serverAddressOf } from '../../src/telemetry/model-call-export.ts'
import { completedRecord } from '../helpers/request-record.ts'

const record = completedRecord

const count = fc.integer({ min: 0, max: 10_000_000 })

describe('GenAI span attributes', () => {
  it('counts input with cache reads and both cache writes, for any Anthropic usage', () => {
    fc.assert(
      fc.property(count, count, count, count, count, (input, read, write5m, write1h, output) => {
        const usage = {
          inputTokens: input,
          cacheReadTokens: read,
          cacheWrite5mTokens: write5m,
          cacheWrite1hTokens: write1h,
          outputTokens: output,
        }
        const genAi = genAiAttributes(record({ usage }), undefined, { latestOnly: true })
        expect(genAi['gen_ai.usage.input_tokens']).toBe(input + read + write5m + write1h)
        expect(genAi['gen_ai.usage.cache_read.input_tokens']).toBe(read)
        expect(genAi['gen_ai.usage.cache_creation.input_tokens']).toBe(write5m + write1h)
        const openInference = openInferenceAttributes(record({ usage }))
        expect(openInference['llm.token_count.prompt']).toBe(genAi['gen_ai.usage.input_tokens'])
        expect(openInference['llm.token_count.total']).toBe(input + read + write5m + write1h + output)
      }),
    )
  })

  it('keeps the v1.36 provider name unless the latest conventions are opted into', () => {
    expect(genAiAttributes(record(), undefined, { latestOnly: false })['gen_ai.system']).toBe('anthropic')
    expect(genAiAttributes(record(), undefined, { latestOnly: true })['gen_ai.system']).toBeUndefined()
  })

  it('names the error: the status of an error answer, else how the call ended', () => {
    expect(errorTypeOf(record())).toBeUndefined()
    expect(errorTypeOf(record({ status: 429 }))).toBe('429')
    expect(errorTypeOf(record({ status: 502, outcome: 'upstream_unreachable' }))).toBe('502')
    expect(errorTypeOf(record({ status: 0, outcome: 'client_closed' }))).toBe('client_closed')
    expect(errorTypeOf(record({ status: 200, outcome: 'upstream_failed' }))).toBe('upstream_failed')
    expect(errorTypeOf(record({ status: 200, outcome: 'incomplete' }))).toBeUndefined()
  })

  it('reads the upstream host and port, the scheme default included', () => {
    expect(serverAddressOf('https://api.anthropic.com')).toEqual({ address: 'api.anthropic.com', port: 443 })
    expect(serverAddressOf('http://[::1]:8080/base')).toEqual({ address: '::1', port: 8080 })
  })
})

describe('ctxgate span attributes', () => {
  it('carries the rewrite report, the batch, the session kind and the holdout arm when there is one', () => {
    const attributes = ctxgateAttributes(
      record({
        failOpen: 'prepare',
        refitted: true,
        retries: ['status_529'],
        accounting: {
          model: 'claude-sonnet-5',
          refusalAvoided: true,
          batchReason: 'pays_back',
          kind: 'shared/abcd',
          arm: 'control',
          breakpointsPlaced: 2,
          report: {
            estimatedBefore: 150_000,
            estimatedAfter: 90_000,
            budget: 180_000,
            folded: 1,
            cleared: 3,
            droppedMessages: 0,
            tokensRemoved: { fold: 10_000, clear: 50_000, drop: 0 },
            newBatch: true,
            clientEdited: false,
            firstEditedMessage: 4,
            firstNewEdit: 7,
          },
        },
      }),
    )
    expect(attributes).toMatchObject({
      'ctxgate.rewrite.estimated_before': 150_000,
      'ctxgate.rewrite.estimated_after': 90_000,
      'ctxgate.rewrite.tokens_removed.fold': 10_000,
      'ctxgate.rewrite.tokens_removed.clear': 50_000,
      'ctxgate.rewrite.tokens_removed.drop': 0,
      'ctxgate.rewrite.batch_reason': 'pays_back',
      'ctxgate.rewrite.edit_point': 7,
      'ctxgate.rewrite.breakpoints_placed': 2,
      'ctxgate.rewrite.refit': true,
      'ctxgate.rewrite.fail_open': 'prepare',
      'ctxgate.rewrite.refusal_avoided': true,
      'ctxgate.session.kind': 'shared/abcd',
      'ctxgate.holdout.arm': 'control',
      'ctxgate.upstream.retries': 1,
    })
  })

  it('leaves out what did not happen', () => {
    const attributes = ctxgateAttributes(record())
    expect(Object.keys(attributes).toSorted()).toEqual([
      'ctxgate.outcome',
      'ctxgate.route',
      'ctxgate.upstream.attempts',
    ])
  })
})
