/**
 * The fewest needed-but-hidden events (docs/quality.md) any policy that keeps or removes whole tool
 * results could reach at a window, with hindsight: for each request, knowing what the agent's next
 * message quotes, keep the outputs that show the most of it within the budget. Nothing carries
 * over between requests (a real policy's edits are frozen, and it cannot see the future), so this
 * is a lower bound on what any clearing order can reach, not a policy.
 *
 * Room: the budget (0.9 of the window, ctxgate's default) counted as the fake upstream counts,
 * less what no policy can remove: the system prompt, the tools, the first message and the newest
 * round (the agent's last message and the results it got). Every other message may go.
 * Usage: tsx bench/hidden-bound.ts --window 64000 FILE...
 */
import { parseArgs } from 'node:util'
import { countTextTokens } from '../src/mock/token-count.ts'
import type { Conversation, Message } from '../src/replay/conversation.ts'
import { neededStrings } from '../src/replay/hidden/at-risk.ts'
import { allText, resultText } from '../src/replay/hidden/message-strings.ts'
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

interface Carrier {
  readonly tokens: number
  readonly shows: ReadonlySet<number>
}

/** The most needed strings a set of carriers within `capacity` tokens can show (an upper bound when the set is large). */
function mostShown(carriers: readonly Carrier[], capacity: number): number {
  if (carriers.length <= 16) {
    let best = 0
    for (let mask = 0; mask < 1 << carriers.length; mask++) {
      let tokens = 0
      const shown = new Set<number>()
      carriers.forEach((carrier, index) => {
        if (!(mask & (1 << index))) return
        tokens += carrier.tokens
        for (const string of carrier.shows) shown.add(string)
      })
      if (tokens <= capacity) best = Math.max(best, shown.size)
    }
    return best
  }
  // Too many to try every set: fractional knapsack, counting a string once per carrier, bounds it from above.
  let left = capacity
  let shown = 0
  for (const carrier of carriers.toSorted((a, b) => b.shows.size / b.tokens - a.shows.size / a.tokens)) {
    const take = Math.min(1, left / carrier.tokens)
    shown += carrier.shows.size * take
    left -= carrier.tokens * take
    if (left <= 0) break
  }
  return Math.floor(shown)
}

/** Bound for one conversation: [requests that fit, fewest events]. */
function boundOf(conversation: Conversation): { sent: number; events: number; refused: number } {
  const needs = neededStrings(conversation)
  const head = countTextTokens(`${conversation.system}\n${allText(conversation.tools)}`)
  let index = 0
  let sent = 0
  let events = 0
  let refused = 0
  for (const messages of conversation.segments)
    messages.forEach((message, position) => {
      if (message.role !== 'assistant' || position === 0) return
      const needed = needs[index++]?.needed.map((entry) => entry.text) ?? []
      const history = messages.slice(0, position)
      const fixed = [history[0], ...history.slice(-2)].filter((entry): entry is Message => entry !== undefined)
      const mandatory = head + fixed.reduce((sum, entry) => sum + countTextTokens(allText(entry.content)), 0)
      if (mandatory > room) {
        refused++
        return
      }
      sent++
      const fixedText = fixed.map((entry) => allText(entry.content)).join('\n')
      const open = needed.map((text, at) => ({ text, at })).filter(({ text }) => !fixedText.includes(text))
      if (open.length === 0) return
      const carriers: Carrier[] = []
      for (const entry of history.slice(1, -2))
        for (const block of entry.content) {
          const text = block.type === 'tool_result' ? resultText(block) : block.type === 'text' ? block.text : ''
          const shows = new Set(open.filter((string) => text.includes(string.text)).map((string) => string.at))
          if (shows.size > 0) carriers.push({ tokens: countTextTokens(text), shows })
        }
      events += open.length - Math.min(open.length, mostShown(carriers, room - mandatory))
    })
  return { sent, events, refused }
}

console.log(
  `window ${values.window}, room ${room} (budget ${values.budget}), hindsight, whole results kept or removed\n`,
)
console.log('| run | sent | refused | fewest hidden events | per 100 sent |')
console.log('|---|---:|---:|---:|---:|')
const totals = { sent: 0, events: 0, refused: 0 }
for (const file of positionals) {
  const loaded = await loadRecordingFile(file, { uncompacted: false })
  for (const conversation of loaded.conversations) {
    const bound = boundOf(conversation)
    totals.sent += bound.sent
    totals.events += bound.events
    totals.refused += bound.refused
    const name = conversation.id.slice(0, 40)
    console.log(
      `| ${name} | ${bound.sent} | ${bound.refused} | ${bound.events} | ${((bound.events / Math.max(1, bound.sent)) * 100).toFixed(1)} |`,
    )
  }
}
console.log(
  `| **all runs** | ${totals.sent} | ${totals.refused} | ${totals.events} | ${((totals.events / Math.max(1, totals.sent)) * 100).toFixed(1)} |`,
)
