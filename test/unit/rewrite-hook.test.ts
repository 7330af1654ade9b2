import { describe, expect, it } from 'vitest'
import { clearedNote, systemNote } from '../../src/rewrite/notes.ts'
import { anthropicBody, buildMessages, output, type Json, type Step } from '../helpers/conversations.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'
import { planCalibrated } from '../../src/forward/rewrite-hook/calibrated-plan.ts'
import type { PipelineOutcome } from '../../src/rewrite/pipeline.ts'

const round = (size: number, kind: Step['outputKind'] = 'prose', calls = 1): Step => ({
  kind: 'round',
  calls,
  sizes: [size, size, size],
  outputKind: kind,
  thinking: false,
  extraField: false,
})
const turn: Step = {
  kind: 'round',
  calls: 1,
  sizes: [1, 1, 1],
  outputKind: 'prose',
  thinking: false,
  extraField: false,
}
const userTurn: Step = { ...turn, kind: 'turn' }

const results = (body: Json): { id: string; content: unknown }[] =>
  (body['messages'] as Json[]).flatMap((message) =>
    (Array.isArray(message['content']) ? (message['content'] as Json[]) : [])
      .filter((block) => block['type'] === 'tool_result')
      .map((block) => ({ id: String(block['tool_use_id']), content: block['content'] })),
  )

describe('the rewrite hook on Anthropic Messages', () => {
  it('changes nothing but cache breakpoints when the request fits', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const messages = buildMessages([round(2_000), round(2_000)])
    const sent = sentBody(await rewrite(anthropicBody(messages)))
    expect(results(sent).map((result) => result.content)).toEqual(
      results(anthropicBody(messages)).map((result) => result.content),
    )
    expect(sent['system']).toBe('You are a careful agent.')
    expect(sent['x_top_level_field']).toBe('kept')
    expect(reportOf(await rewrite(anthropicBody(messages)))).toMatchObject({
      folded: 0,
      cleared: 0,
      droppedMessages: 0,
    })
  })

  it('sends the client’s own bytes, formatting included, when the rewrite changes nothing', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const original = Buffer.from(
      JSON.stringify(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Short question \u00e9?' }] },
        null,
        2,
      ),
    )
    const result = await rewrite.raw(original)
    if (result.kind !== 'forward') throw new Error('expected a forwarded request')
    expect(result.prepared.body).toBe(original)
    // Large enough for a cache breakpoint: now the body changes, so it is serialized again.
    const marked = Buffer.from(JSON.stringify(anthropicBody(buildMessages([round(2_000), round(2_000)])), null, 2))
    const rewritten = await rewrite.raw(marked)
    if (rewritten.kind !== 'forward') throw new Error('expected a forwarded request')
    expect(rewritten.prepared.body.equals(marked)).toBe(false)
    expect(rewritten.prepared.body.toString('utf8')).toContain('"cache_control":{"type":"ephemeral"}')
  })

  it('lets other requests run between the phases of a large body instead of holding the event loop throughout', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const large = anthropicBody(buildMessages(Array.from({ length: 130 }, () => round(2_000))))
    expect(JSON.stringify(large).length).toBeGreaterThan(256 * 1024)
    let otherWorkRan = false
    setImmediate(() => (otherWorkRan = true))
    const pending = rewrite(large).then(() => otherWorkRan)
    expect(await pending).toBe(true)
    // A small body is handled in one go: nothing else runs in between.
    let ranDuringSmall = false
    setImmediate(() => (ranDuringSmall = true))
    await rewrite(anthropicBody(buildMessages([round(200)])))
    expect(ranDuringSmall).toBe(false)
  })

  it('folds large outputs older than the newest 3 rounds when over budget, and leaves the newest rounds alone', async () => {
    const rewrite = createRewriter('anthropic-messages', 16_000, { rewrite: { lowWater: 0.7 } })
    const messages = buildMessages(Array.from({ length: 8 }, () => round(6_000)))
    const result = await rewrite(anthropicBody(messages))
    const sent = sentBody(result)
    const contents = results(sent).map((entry) => String(entry.content))
    expect(contents.slice(-3).every((content) => content.length === 6_000)).toBe(true)
    expect(
      contents.slice(0, -3).some((content) => content.startsWith('[ctxgate folded this tool output (6,000 characters')),
    ).toBe(true)
    expect(reportOf(result)).toMatchObject({ newBatch: true })
    // With the first edit comes the system note.
    expect(sent['system']).toEqual([
      { type: 'text', text: 'You are a careful agent.' },
      { type: 'text', text: systemNote },
    ])
  })

  it('clears the oldest results first and keeps the newest whole, even when it alone is large', async () => {
    const rewrite = createRewriter('anthropic-messages', 7_000, { rewrite: { strategy: 'clear-only' } })
    const messages = buildMessages([round(3_000), round(3_000), round(3_000), round(3_000), round(9_000, 'prose')])
    const sent = sentBody(await rewrite(anthropicBody(messages)))
    const contents = results(sent).map((entry) => entry.content)
    expect(contents[0]).toBe(clearedNote)
    expect(String(contents.at(-1)).length).toBe(9_000)
    expect(contents.indexOf(clearedNote)).toBe(0)
    const firstKept = contents.findIndex((content) => content !== clearedNote)
    expect(contents.slice(firstKept).every((content) => content !== clearedNote)).toBe(true)
  })

  it('drops whole old user turns, keeping the first message with a note', async () => {
    const rewrite = createRewriter('anthropic-messages', 6_000, { rewrite: { strategy: 'clear-only' } })
    // Results too small to be worth clearing: only whole turns can go.
    const steps: Step[] = []
    for (let part = 0; part < 12; part++)
      steps.push(round(60, 'json', 3), round(60, 'json', 3), round(60, 'json', 3), userTurn)
    steps.push(round(300))
    const body = anthropicBody(buildMessages(steps))
    const result = await rewrite(body)
    const sent = sentBody(result)
    const kept = sent['messages'] as Json[]
    expect(kept.length).toBeLessThan((body['messages'] as Json[]).length)
    expect(kept[0]?.['x_client_field']).toEqual({ keep: true })
    expect(JSON.stringify(kept[0])).toContain('earlier messages of this conversation were removed')
    expect(reportOf(result)).toMatchObject({ droppedMessages: expect.any(Number) })
    // The newest turn survives whole: its last result is untouched.
    expect(String(results(sent).at(-1)?.content).length).toBe(300)
  })

  it('drops whole tool rounds inside one long turn (a sub-agent)', async () => {
    const rewrite = createRewriter('anthropic-messages', 8_000)
    const body = anthropicBody(buildMessages(Array.from({ length: 120 }, () => round(80, 'log', 2))))
    const result = await rewrite(body)
    const kept = sentBody(result)['messages'] as Json[]
    expect(JSON.stringify(kept[0])).toContain('older tool calls and their results) were removed')
    expect(kept[1]?.['role']).toBe('assistant')
    // The newest round arrives whole (only a rolling cache marker may be added).
    expect(JSON.stringify(kept.at(-1)).replace(',"cache_control":{"type":"ephemeral"}', '')).toBe(
      JSON.stringify((body['messages'] as Json[]).at(-1)),
    )
    expect(Number(reportOf(result)['estimatedAfter'])).toBeLessThanOrEqual(Number(reportOf(result)['budget']))
  })

  it('fits a single 70k-token round into a 64k window: older results of that round are cleared, its newest stays whole', async () => {
    const rewrite = createRewriter('anthropic-messages', 64_000)
    const body = anthropicBody(
      buildMessages([round(400), { ...round(60_000, 'prose', 3), sizes: [60_000, 60_000, 60_000] }]),
    )
    const result = await rewrite(body)
    const sent = sentBody(result)
    const contents = results(sent).map((entry) => String(entry.content))
    expect(contents.at(-1)?.length).toBe(60_000)
    expect(contents.slice(1, -1)).toContain(clearedNote)
    expect(Number(reportOf(result)['estimatedBefore'])).toBeGreaterThan(64_000)
    expect(Number(reportOf(result)['estimatedAfter'])).toBeLessThanOrEqual(Number(reportOf(result)['budget']))
  })

  it('answers with a clear error when even the newest round cannot fit', async () => {
    const rewrite = createRewriter('anthropic-messages', 4_000)
    const result = await rewrite(anthropicBody(buildMessages([round(500), { ...round(40_000, 'hex'), calls: 1 }])))
    expect(result.kind).toBe('reject')
    if (result.kind === 'reject') {
      expect(result.error.code).toBe('CTXGATE_CONTEXT_TOO_LONG')
      // The API's own opening words (what Claude Code compacts on), then ctxgate's explanation.
      expect(result.error.message).toMatch(
        /^prompt is too long: \d+ tokens > 3000 maximum This conversation got too long for the model to read in one go/,
      )
    }
  })

  it('re-applies frozen decisions byte for byte on the next request and adds no new batch until needed', async () => {
    const rewrite = createRewriter('anthropic-messages', 30_000)
    const steps = Array.from({ length: 14 }, (_, index) => round(index % 2 === 0 ? 7_000 : 300, 'json'))
    const all = buildMessages(steps)
    const first = await rewrite(anthropicBody(all.slice(0, 25)))
    const second = await rewrite(anthropicBody(all.slice(0, 27)))
    const firstSent = sentBody(first)
    const secondSent = sentBody(second)
    expect(reportOf(first)['newBatch']).toBe(true)
    expect(reportOf(second)['newBatch']).toBe(false)
    const strip = (messages: Json[]) => JSON.stringify(messages).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '')
    const before = firstSent['messages'] as Json[]
    expect(strip((secondSent['messages'] as Json[]).slice(0, before.length))).toBe(strip(before))
    expect(secondSent['system']).toEqual(firstSent['system'])
  })

  it('forgets a decision when the client changed that result, and says so', async () => {
    const rewrite = createRewriter('anthropic-messages', 12_000)
    const messages = buildMessages(Array.from({ length: 8 }, () => round(6_000)))
    await rewrite(anthropicBody(messages))
    const edited = structuredClone(messages)
    const third = edited[2] as Json
    ;((third['content'] as Json[])[0] as Json)['content'] = output('json', 6_000, 99)
    expect(reportOf(await rewrite(anthropicBody(edited)))).toMatchObject({ clientEdited: true })
  })

  it('honours x-ctxgate-budget and x-ctxgate-mode: passthrough', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const body = anthropicBody(buildMessages(Array.from({ length: 8 }, () => round(6_000))))
    expect(reportOf(await rewrite(body, { 'x-ctxgate-budget': '9000' }))).toMatchObject({
      budget: 9_000,
      newBatch: true,
    })
    const passthrough = await rewrite(body, { 'x-ctxgate-mode': 'passthrough' })
    expect(passthrough.kind === 'forward' && passthrough.prepared.body.toString()).toBe(JSON.stringify(body))
  })

  it('still fits a Claude Code request that only asks the server to clear thinking (keep: all)', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const body = {
      ...anthropicBody(buildMessages(Array.from({ length: 8 }, () => round(6_000)))),
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    }
    const report = reportOf(await rewrite(body, { 'x-ctxgate-budget': '9000' }))
    expect(report).toMatchObject({ budget: 9_000, newBatch: true })
    expect(Number(report['cleared']) + Number(report['folded'])).toBeGreaterThan(0)
    // Clearing tool uses is the server's job once asked for: then ctxgate leaves the content alone.
    const managed = { ...body, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } }
    const fresh = createRewriter('anthropic-messages', 200_000)
    const left = reportOf(await fresh(managed, { 'x-ctxgate-budget': '9000' }))
    expect(Number(left['cleared']) + Number(left['folded']) + Number(left['droppedMessages'])).toBe(0)
  })

  it('does not count a refused request as a turn: its refit and the next request see the conversation as before', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const body = anthropicBody(buildMessages(Array.from({ length: 8 }, () => round(6_000))))
    const first = await rewrite(body)
    if (first.kind !== 'forward' || !first.prepared.followUp?.replannable)
      throw new Error('expected a refittable request')
    // A limit the request is over, so the refit is smaller than what was refused (else none is sent).
    const refit = await first.prepared.followUp.replan({ actualTokens: 20_000, limit: 10_000 })
    expect(refit?.log?.['turn']).toBe(1)
    const next = await rewrite(body)
    expect(next.kind === 'forward' && next.prepared.log?.['turn']).toBe(2)
  })

  it('reads x-ctxgate-mode in any case and takes x-ctxgate-budget only as decimal digits', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    const body = anthropicBody(buildMessages(Array.from({ length: 8 }, () => round(6_000))))
    const shouted = await rewrite(body, { 'x-ctxgate-mode': 'PassThrough' })
    expect(shouted.kind === 'forward' && shouted.prepared.body.toString()).toBe(JSON.stringify(body))
    for (const odd of ['0x2328', '9e3', '-9000', '9000abc'])
      expect(reportOf(await rewrite(body, { 'x-ctxgate-budget': odd })).budget).toBeGreaterThan(9_000)
  })

  it('forwards bodies it cannot read untouched', async () => {
    const rewrite = createRewriter('anthropic-messages', 200_000)
    for (const body of [{ hello: 'world' }, { model: 'm', messages: 'nope' }, { model: 'm', messages: [1] }]) {
      const result = await rewrite(body as Json)
      expect(result.kind === 'forward' && result.prepared.body.toString()).toBe(JSON.stringify(body))
    }
  })

  it('learns from reported usage: an undercounting estimate makes the next plan cut more', async () => {
    const rewrite = createRewriter('anthropic-messages', 40_000)
    const body = anthropicBody(buildMessages(Array.from({ length: 10 }, () => round(3_000, 'json'))))
    const first = await rewrite(body)
    const before = reportOf(first)
    if (first.kind !== 'forward') throw new Error('expected forward')
    const estimated = Number(before['estimatedAfter'])
    first.prepared.followUp?.recordUsage({
      inputTokens: estimated * 3,
      cacheReadTokens: 0,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 1,
    })
    expect(rewrite.calibration.factor('claude-sonnet-4-5')).toBeGreaterThan(2)
    const after = reportOf(
      await rewrite(
        anthropicBody(buildMessages(Array.from({ length: 10 }, () => round(3_000, 'json'))), {
          metadata: { user_id: 'other' },
        }),
      ),
    )
    expect(Number(after['estimatedAfter'])).toBeLessThanOrEqual(Number(after['budget']))
    expect(Number(after['cleared']) + Number(after['folded'])).toBeGreaterThan(
      Number(before['cleared']) + Number(before['folded']),
    )
  })

  it('accepts a rewritten request when it is sent through again: the note’s room is what the adapter writes', async () => {
    // A string system prompt becomes a list of blocks when the note joins it: 3 more tokens than the note alone.
    // Around this size the plan lands within those tokens of the budget (a fast-check seed found it).
    for (let size = 3_440; size <= 3_490; size += 2) {
      const steps = [round(20), round(20), round(20), round(20), { ...round(size, 'hex'), thinking: true }]
      const once = await createRewriter('anthropic-messages', 3_006)(anthropicBody(buildMessages(steps)))
      if (once.kind === 'reject') continue
      const first = sentBody(once)
      const twice = await createRewriter('anthropic-messages', 3_006)(first)
      expect(JSON.stringify(sentBody(twice))).toBe(JSON.stringify(first))
    }
  })

  it('sees no client edit or prefix break for tool ids named like Object.prototype members', async () => {
    const rewrite = createRewriter('anthropic-messages', 10_000, { rewrite: { strategy: 'clear-only' } })
    const ids = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf']
    const messages = buildMessages(Array.from({ length: 10 }, () => round(4_000))).map((message) =>
      JSON.parse(
        JSON.stringify(message).replace(/toolu_(\d+)_0/g, (_, step: string) => ids[Number(step)] ?? `toolu_${step}_0`),
      ),
    ) as Json[]
    const first = await rewrite(anthropicBody(messages.slice(0, 19)))
    expect(reportOf(first)).toMatchObject({ newBatch: true, clientEdited: false })
    const second = await rewrite(anthropicBody(messages))
    expect(reportOf(second)).toMatchObject({ newBatch: false, clientEdited: false })
    expect(second.kind === 'forward' && second.prepared.accounting?.prefixBreak).toBeUndefined()
    expect(
      results(sentBody(second))
        .filter((entry) => entry.content === clearedNote)
        .map((entry) => entry.id),
    ).toEqual(expect.arrayContaining(['constructor', '__proto__']))
  })
})

describe('planCalibrated', () => {
  const outcome = (factor: number, newBatch: boolean) =>
    ({ kind: 'rewritten', report: { newBatch, estimatedAfter: 40_000 * factor }, factor }) as unknown as PipelineOutcome

  it('plans again with the factor for what a new batch leaves, and settles when it stops rising', () => {
    const planned: number[] = []
    const asked: (number | undefined)[] = []
    const result = planCalibrated(
      (factor) => {
        planned.push(factor)
        return outcome(factor, true)
      },
      (after) => {
        asked.push(after?.sentAfterEdits)
        return after === undefined ? 0.9 : 1.05
      },
    )
    expect(planned).toEqual([0.9, 1.05])
    expect(asked).toEqual([undefined, 40_000, 40_000])
    expect(result.factor).toBe(1.05)
  })

  it('plans once when the request makes no new batch', () => {
    const planned: number[] = []
    planCalibrated(
      (factor) => {
        planned.push(factor)
        return outcome(factor, false)
      },
      () => 0.9,
    )
    expect(planned).toEqual([0.9])
  })
})
