/**
 * The fewest needed-but-hidden events (docs/quality.md) any policy that keeps or removes whole
 * blocks could reach at a window, with hindsight (src/replay/hidden/bound.ts): for each request,
 * knowing what the agent's next message quotes, keep the blocks that show the most of it within
 * the budget. A lower bound on what any clearing order can reach, not a policy.
 * Usage: tsx bench/hidden-bound.ts --window 64000 [--budget 0.9] FILE...
 */
import { parseArgs } from 'node:util'
import { hindsightBound } from '../src/replay/hidden/bound.ts'
import { loadRecordingFile } from '../src/replay/importers/load-recording.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { window: { type: 'string', default: '64000' }, budget: { type: 'string', default: '0.9' } },
})
if (positionals.length === 0) {
  console.error('usage: tsx bench/hidden-bound.ts --window 64000 FILE...')
  process.exit(2)
}
const room = Number(values.window) * Number(values.budget)

console.log(
  `window ${values.window}, room ${room} (budget ${values.budget}), hindsight, whole blocks kept or removed\n`,
)
console.log('| run | sent | refused | fewest hidden events | per 100 sent |')
console.log('|---|---:|---:|---:|---:|')
const totals = { sent: 0, events: 0, refused: 0 }
const per100 = (events: number, sent: number): string => ((events / Math.max(1, sent)) * 100).toFixed(1)
for (const file of positionals) {
  const loaded = await loadRecordingFile(file, { uncompacted: false })
  for (const conversation of loaded.conversations) {
    const bound = hindsightBound(conversation, room)
    totals.sent += bound.sent
    totals.events += bound.events
    totals.refused += bound.refused
    console.log(
      `| ${conversation.id.slice(0, 40)} | ${bound.sent} | ${bound.refused} | ${bound.events} | ${per100(bound.events, bound.sent)} |`,
    )
  }
}
console.log(
  `| **all runs** | ${totals.sent} | ${totals.refused} | ${totals.events} | ${per100(totals.events, totals.sent)} |`,
)
