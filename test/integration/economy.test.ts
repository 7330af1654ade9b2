import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { output } from '../helpers/conversations.ts'
import { toolLoopMessages } from '../helpers/hook-on-clock.ts'
import { eventually, requestLogs, startStack, type Stack } from '../helpers/stack.ts'

/** A tool loop as an agent sends it: each request resends the history and adds one round of 8,000 characters. */
const loop = (rounds: number): Anthropic.MessageParam[] =>
  toolLoopMessages(rounds, 'Task: find the failing test and fix it.') as unknown as Anthropic.MessageParam[]

async function scrape(stack: Stack): Promise<string> {
  return (await request(`${stack.proxyUrl}/metrics`)).body.text()
}

const value = (metrics: string, series: string): number =>
  Number(
    metrics
      .split('\n')
      .find((line) => line.startsWith(series))
      ?.split(' ')
      .at(-1) ?? Number.NaN,
  )

describe('the cache-priced economy through ctxgate, with the Anthropic SDK', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ config: { economy: { startTokens: 10_000, shortSessionRequests: 4 } } })
  })
  afterAll(() => stack.close())

  it('clears old results below budget once the batch pays, counts it by reason, and bills the session', async () => {
    const anthropic = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-economy',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'economy-1' },
    })
    // Long enough that a batch pays back within the conservative forecast (a 15% quantile of what is left).
    for (let rounds = 1; rounds <= 24; rounds++)
      await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: loop(rounds) })
    const logs = requestLogs(stack).filter((line) => line['session'] === 'economy-1')
    const batches = logs.filter((line) => line['batch'] !== undefined)
    expect(batches.length).toBeGreaterThan(0)
    expect(batches[0]?.['batch']).toMatchObject({ reason: 'pays_back' })
    // Short sessions wait: nothing before the fourth request, whatever its size.
    expect(logs.slice(0, 3).every((line) => line['batch'] === undefined)).toBe(true)
    // The mock received the cleared results; the newest three rounds went as sent.
    const sent = JSON.parse(stack.mock.requests.at(-1)?.body ?? '{}') as { messages: Anthropic.MessageParam[] }
    const results = sent.messages
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .filter((block): block is Anthropic.ToolResultBlockParam => block.type === 'tool_result')
    expect(String(results[0]?.content)).toMatch(/^\[ctxgate/)
    expect(results.slice(-3).every((block) => String(block.content).length === 8_000)).toBe(true)
    const metrics = await scrape(stack)
    expect(value(metrics, 'ctxgate_edit_batches_total{provider="anthropic",reason="pays_back"}')).toBe(batches.length)
    expect(value(metrics, 'ctxgate_edit_batches_total{provider="anthropic",reason="over_budget"}')).toBe(0)
    // The regret ledger: what the batches predicted beside what came true, in the log line and the metric.
    const ledger = logs.at(-1)?.['ledger'] as Record<string, number> | undefined
    expect(ledger).toMatchObject({ batches: batches.length })
    expect(ledger?.['realizedSaved']).toBeGreaterThan(0)
    for (const figure of ['predicted_cost', 'predicted_saving', 'realized_rewrite', 'realized_saved'])
      expect(
        value(
          metrics,
          `ctxgate_economy_ledger_tokens_total{provider="anthropic",reason="pays_back",figure="${figure}"}`,
        ),
      ).toBeGreaterThan(0)
    expect(
      value(metrics, 'ctxgate_billed_dollars_total{provider="anthropic",model="claude-sonnet-4-5"}'),
    ).toBeGreaterThan(0)
    await eventually(async () => {
      const session = (await (await request(`${stack.proxyUrl}/ctxgate/sessions/economy-1`)).body.json()) as Record<
        string,
        number
      >
      expect(session['turns']).toBe(24)
      expect(session['economyBatches']).toBe(batches.length)
      expect(session['ledgerPredictedCost']).toBeGreaterThan(0)
      expect(session['ledgerRealizedRewrite']).toBeGreaterThan(0)
      expect(session['ledgerRealizedSaved']).toBeGreaterThan(0)
      expect(session['billedTokens']).toBeGreaterThan(0)
      expect(session['uneditedBilledTokens']).toBeGreaterThan(session['billedTokens'] as number)
      expect(session['dollars']).toBeGreaterThan(0)
      expect(session['uneditedDollars']).toBeGreaterThan(session['dollars'] as number)
      expect(session['unpricedTurns']).toBe(0)
    })
  })

  it('lets each later batch read the prefix up to where it edits, from a marker kept just ahead of it', async () => {
    const anthropic = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-economy',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'economy-marks' },
    })
    // Marked like Claude Code marks its requests: two system blocks and the newest message, one slot left.
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: output('prose', 6_000, 99), cache_control: { type: 'ephemeral' } },
    ]
    const reads: number[] = []
    for (let rounds = 1; rounds <= 40; rounds++) {
      const messages = loop(rounds)
      const last = messages.at(-1) as Anthropic.MessageParam
      const blocks = last.content as Anthropic.ContentBlockParam[]
      last.content = blocks.map((block, index) =>
        index === blocks.length - 1 ? { ...block, cache_control: { type: 'ephemeral' as const } } : block,
      )
      const answer = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, system, messages })
      reads.push(answer.usage.cache_read_input_tokens ?? 0)
    }
    const logs = requestLogs(stack).filter((line) => line['session'] === 'economy-marks')
    const batchAt = logs.flatMap((line, index) => (line['batch'] !== undefined ? [index] : []))
    expect(batchAt.length).toBeGreaterThanOrEqual(3)
    const readAtBatch = batchAt.map((index) => reads[index] ?? 0)
    // The system blocks each batch request sent upstream: a batch that also switches the deferred note on
    // rewrites from the head by choice (it was priced so, docs/economy.md), and is not one that relies on the marker.
    const systems = stack.mock.requests
      .map((request) => JSON.parse(request.body) as { system?: unknown[]; messages?: unknown[] })
      .filter(
        (body) =>
          body.messages !== undefined && String(JSON.stringify(body.system)).includes('You are a coding agent.'),
      )
      .map((body) => body.system?.length ?? 0)
    const noteAt = batchAt.map((index) => systems[index])
    let compared = 0
    // The first batch starts at the oldest result and reads the head; each later one reads past what earlier ones cleared.
    for (let index = 1; index < readAtBatch.length; index++) {
      if (noteAt[index] !== noteAt[index - 1]) continue
      expect(readAtBatch[index]).toBeGreaterThan(readAtBatch[index - 1] as number)
      compared++
    }
    expect(compared).toBeGreaterThanOrEqual(batchAt.length - 2)
  })
})
