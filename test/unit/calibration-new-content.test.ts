import { describe, expect, it } from 'vitest'
import { countTextTokens } from '../../src/mock/token-count.ts'
import { Calibration, conversationMargin } from '../../src/calibration/calibration.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'

/**
 * The shape of a request that was once under-estimated by 18%: an agent's first request is mostly
 * English instructions (which the estimator overcounts), its second adds a few large file reads of
 * line-numbered Japanese markdown (which it slightly undercounts), and the process has seen no other
 * conversation, so the model-wide factor was learned from that same first request.
 */
const model = 'claude-sonnet-4-5'

const instructions = Array.from(
  { length: 60 },
  (_, rule) =>
    `Rule ${rule + 1}. Before you change a file, read it and the tests that cover it; keep each change small, explain why it is needed, and run the checks again when you are done.`,
).join('\n')

const designLines = [
  '# 設計書: 自動ロールバック',
  '',
  '**対象**: `src/commands/rollback.ts` と `src/core/phase-state.ts`',
  '',
  '## 1. 概要',
  'ロールバック時に前のフェーズの成果物を自動で復元する。失敗した場合はエラーを返す。',
  '- 入力: `--phase implementation` (省略可)',
  '- 出力: 復元したファイルの一覧 (JSON)',
]
/** A file read as a coding agent's tool shows it: each line behind its number and an arrow. */
const fileRead = (lines: number): string =>
  Array.from(
    { length: lines },
    (_, line) => `${String(line + 1).padStart(6)}→${designLines[line % designLines.length] ?? ''}`,
  ).join('\n')

describe('calibration of content a conversation has not sent before', () => {
  it('does not undercount large file reads of a new kind that follow a first request of prose', async () => {
    const estimator = new TokenEstimator()
    const calibration = new Calibration()
    const conversation = 'session/fingerprint'
    const first = [instructions, 'Implement the automatic rollback described in the design documents.']
    const reads = [fileRead(300), fileRead(700), fileRead(500)]
    const estimate = (texts: readonly string[]): number => texts.reduce((sum, text) => sum + estimator.text(text), 0)
    const actual = (texts: readonly string[]): number => texts.reduce((sum, text) => sum + countTextTokens(text), 0)

    const firstEstimate = estimate(first)
    await calibration.record(model, firstEstimate, actual(first), 'conversation:a', {
      key: conversation,
      unedited: firstEstimate,
    })
    // The fixture has the failing shape: easy content first, harder content after it, most of the prompt.
    expect(actual(first) / firstEstimate).toBeLessThan(0.85)
    expect(actual(reads) / estimate(reads)).toBeGreaterThan(1)
    expect(estimate(reads)).toBeGreaterThan(3 * firstEstimate)

    const second = [...first, ...reads]
    const factor = calibration.factor(model, { key: conversation, unedited: estimate(second) }, 'conversation:a')
    // What the first answer taught alone would have been far too low for the second request.
    expect((actual(first) / firstEstimate) * conversationMargin * estimate(second)).toBeLessThan(0.9 * actual(second))
    expect(factor * estimate(second)).toBeGreaterThanOrEqual(actual(second))
    expect(factor * estimate(second)).toBeLessThanOrEqual(1.15 * actual(second))
  })
})
