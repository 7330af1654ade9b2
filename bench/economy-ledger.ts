/**
 * The economy's regret ledger on recorded runs: for every run, replayed through ctxgate against the
 * fake upstream under both cache-write readings, the bill against the careful agent sent direct and
 * what the economy's batches predicted (one-time cost, saving over the conservative horizon) beside
 * what came true (the rewrite by the upstream's counts, the reads later requests were spared).
 *
 *   npx tsx bench/economy-ledger.ts FILE... [--client-cache rolling|none|tight|full] [--window 1000000]
 */
import { parseArgs } from 'node:util'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { runName } from '../src/replay/report/rows.ts'
import { replayConversation, type LedgerFigures } from '../src/replay/run-replay.ts'
import { cacheWriteReadings } from '../src/mock/prompt-cache.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { bestSchedule, scheduleCost, scheduleFloorOf, type ScheduleFloor } from '../src/replay/best-schedule.ts'
import { buildAnthropicRequests, clientCaches, type ClientCache } from '../src/replay/build-requests.ts'
import type { Conversation } from '../src/replay/conversation.ts'
import { NotAToolLoop, toolLoopOf } from './tool-loop-rounds.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'client-cache': { type: 'string', default: 'rolling' }, window: { type: 'string', default: '1000000' } },
})
if (positionals.length === 0) {
  process.stderr.write(
    'usage: tsx bench/economy-ledger.ts FILE... [--client-cache rolling|none|tight|full] [--window N]\n',
  )
  process.exit(2)
}
const clientCache = (clientCaches as readonly string[]).includes(values['client-cache'] ?? '')
  ? (values['client-cache'] as ClientCache)
  : 'rolling'
const thousands = (value: number): string => Math.round(value).toLocaleString('en-US')
const conversations = positionals.flatMap((file) => loadRecording(file, { uncompacted: false }).conversations)

const floor: ScheduleFloor = scheduleFloorOf(loadConfig().economy)

/**
 * The hindsight-best schedule of whole batches, ÷ the same model with no batch, under the default
 * floor with its need-hazard cap (what ctxgate may clear) and with any old result allowed; undefined
 * where the run is not a tool loop of one call per turn.
 */
function bestRatios(
  conversation: Conversation,
): { quality: number; batchAt: readonly number[]; anyResult: number } | undefined {
  const bodies = buildAnthropicRequests(conversation, { maxTokens: 4096, clientCache: 'none', stream: false }).map(
    (request) => JSON.stringify(request.body),
  )
  try {
    const loop = toolLoopOf(bodies)
    const none = scheduleCost(loop, floor, [])
    const best = bestSchedule(loop, floor)
    const { maxNeedHazard: _cap, keepReadsEditsNeed: _keep, ...anyResult } = floor
    return {
      quality: best.billed / none,
      batchAt: best.batchAt,
      anyResult: bestSchedule(loop, anyResult).billed / none,
    }
  } catch (error) {
    if (error instanceof NotAToolLoop) return undefined
    throw error
  }
}

const figure = (ledger: LedgerFigures | undefined, name: string): number => ledger?.[name] ?? 0
const rows: string[] = []
/** Per run, the careful agent direct and ctxgate's ratio to it under the first reading: the best table sets them side by side. */
const firstReading = new Map<Conversation, { direct: number; ratio: number }>()
for (const cacheWrites of cacheWriteReadings) {
  const totals = { careful: 0, through: 0, cost: 0, saving: 0, rewrite: 0, saved: 0 }
  let worst = 0
  for (const conversation of conversations) {
    const common = { window: Number(values.window), minCacheableTokens: 1024, maxTokens: 4096, stream: false }
    // "Careful direct": the agent marking its own cache (rolling), straight to the same fake upstream.
    const careful = await replayConversation(conversation, {
      ...common,
      clientCache: 'rolling',
      cacheWrites,
      variants: [{ label: 'direct', direct: true }],
    })
    const through = await replayConversation(conversation, {
      ...common,
      clientCache,
      cacheWrites,
      variants: [{ label: 'ctxgate' }],
    })
    const direct = careful.summaries['direct']!.billedEquivalentInput
    const billed = through.summaries['ctxgate']!.billedEquivalentInput
    const ledger = through.ledgers?.['ctxgate']
    const run = [figure(ledger, 'predicted_cost'), figure(ledger, 'predicted_saving')]
    const came = [figure(ledger, 'realized_rewrite'), figure(ledger, 'realized_saved')]
    totals.careful += direct
    totals.through += billed
    totals.cost += run[0]!
    totals.saving += run[1]!
    totals.rewrite += came[0]!
    totals.saved += came[1]!
    worst = Math.max(worst, billed / direct)
    if (!firstReading.has(conversation)) firstReading.set(conversation, { direct, ratio: billed / direct })
    rows.push(
      `| ${cacheWrites} | ${runName(through).slice(0, 60)} | ${thousands(direct)} | ${thousands(billed)} | ${(billed / direct).toFixed(3)} | ${thousands(run[0]!)} | ${thousands(run[1]!)} | ${thousands(came[0]!)} | ${thousands(came[1]!)} |`,
    )
  }
  rows.push(
    `| ${cacheWrites} | **all runs** (worst run ${worst.toFixed(3)}) | ${thousands(totals.careful)} | ${thousands(totals.through)} | **${(totals.through / totals.careful).toFixed(3)}** | ${thousands(totals.cost)} | ${thousands(totals.saving)} | ${thousands(totals.rewrite)} | ${thousands(totals.saved)} |`,
  )
}
const weighted = { direct: 0, best: 0, anyResult: 0, ctxgate: 0 }
const best = conversations.map((conversation) => {
  const found = bestRatios(conversation)
  const own = firstReading.get(conversation)
  if (!found || !own) return `| ${conversation.id.slice(0, 60)} | | — (not one call per turn) | | | |`
  // Each run weighs by what the careful agent pays direct, so the total is the set's bill ÷ its careful direct.
  weighted.direct += own.direct
  weighted.best += found.quality * own.direct
  weighted.anyResult += found.anyResult * own.direct
  weighted.ctxgate += own.ratio * own.direct
  const gap = (own.ratio / found.quality - 1) * 100
  return `| ${conversation.id.slice(0, 60)} | ${own.ratio.toFixed(3)} | ${found.quality.toFixed(3)} | ${gap.toFixed(1)}% | ${found.batchAt.join(', ') || 'none'} | ${found.anyResult.toFixed(3)} |`
})
if (weighted.direct > 0) {
  const share = (value: number): string => (value / weighted.direct).toFixed(3)
  const gap = (weighted.ctxgate / weighted.best - 1) * 100
  best.push(
    `| **all runs** (weighted by careful direct) | ${share(weighted.ctxgate)} | **${share(weighted.best)}** | ${gap.toFixed(1)}% | | ${share(weighted.anyResult)} |`,
  )
}
process.stdout.write(
  [
    `Client cache marks through ctxgate: ${clientCache}; careful direct: rolling marks, no ctxgate; window ${thousands(Number(values.window))}.`,
    '',
    '| cache writes | run | careful direct | through ctxgate | ÷ careful direct | predicted cost | predicted saving | realized rewrite | realized saved |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `Best schedule of whole batches with hindsight (src/replay/best-schedule.ts; floor: newest ${floor.keepNewestRounds} rounds whole, from ${thousands(floor.startTokens)} tokens, not before request ${floor.shortSessionRequests}, results needed again at most ${floor.maxNeedHazard} per request, reads an edit will need kept as ctxgate restores them), ÷ the same model with no batch; the last column lets any old result go:`,
    '',
    `| run | ctxgate ÷ careful direct (${cacheWriteReadings[0]}) | best ÷ no batch, same floor | ctxgate above best | batches at requests | best, any old result |`,
    '| --- | ---: | ---: | ---: | --- | ---: |',
    ...best,
    '',
  ].join('\n'),
)
