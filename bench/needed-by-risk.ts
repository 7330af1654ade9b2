/**
 * How often an old tool result is needed again, by its clearing-risk class and age: for every
 * request of every recording and every result older than the protected rounds, whether the agent's
 * next message quotes a distinctive string only that result (of the tool outputs) held. These are
 * the hazards the economy prices a re-fetch with (src/rewrite/clear-order.ts).
 * Usage: tsx bench/needed-by-risk.ts FILE...
 */
import { neededStrings } from '../src/replay/hidden/at-risk.ts'
import { resultText } from '../src/replay/hidden/message-strings.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { repeatedCalls } from '../src/replay/refetches.ts'
import { clearRisks, type ClearRisk, type ToolCall } from '../src/rewrite/clear-order.ts'
import { refetchWindow } from '../src/rewrite/refetch.ts'

const files = process.argv.slice(2).filter((argument) => !argument.startsWith('--'))
const protectedRounds = 3
const tally = new Map<string, { seen: number; needed: number; tokens: number }>()
// The baseline for live re-fetch counts: calls repeating an earlier one (same tool and input, or a read of the same file) within the window, with the whole context.
let requests = 0
let repeats = 0
const bucket = (age: number): string => (age <= 10 ? '4-10' : age <= 20 ? '11-20' : '21+')

for (const file of files)
  for (const conversation of loadRecording(file, { uncompacted: false }).conversations) {
    const needs = neededStrings(conversation)
    let request = 0
    requests += needs.length
    repeats += repeatedCalls(conversation)
    for (const messages of conversation.segments) {
      const calls: ToolCall[] = []
      const roundOf = new Map<string, number>()
      const results: { id: string; text: string }[] = []
      let rounds = 0
      messages.forEach((message, position) => {
        if (message.role === 'assistant' && position > 0) {
          const needed = needs[request++]?.needed ?? []
          const risks = clearRisks(calls)
          results.forEach((result, place) => {
            const age = rounds - 1 - (roundOf.get(result.id) ?? 0)
            if (age < protectedRounds) return
            const risk: ClearRisk = risks.get(result.id) ?? 'output'
            const key = `${risk} ${bucket(age)}`
            const entry = tally.get(key) ?? { seen: 0, needed: 0, tokens: 0 }
            entry.seen++
            entry.tokens += result.text.length / 4
            // Needed from this result alone: no newer tool output holds the string too.
            const later = results.slice(place + 1)
            if (
              needed.some(
                (string) =>
                  result.text.includes(string.text) && !later.some((other) => other.text.includes(string.text)),
              )
            )
              entry.needed++
            tally.set(key, entry)
          })
        }
        if (message.role === 'assistant' && message.content.some((block) => block.type === 'tool_use')) rounds++
        for (const block of message.content) {
          if (block.type === 'tool_use') {
            calls.push({ id: block.id, name: block.name, input: block.input })
            roundOf.set(block.id, rounds - 1)
          }
          if (block.type === 'tool_result') results.push({ id: block.tool_use_id, text: resultText(block) })
        }
      })
    }
  }

console.log(
  '| risk | age (rounds) | result-requests | needed next request, from it alone | hazard per request | avg tokens |',
)
console.log('|---|---|---:|---:|---:|---:|')
for (const [key, entry] of [...tally.entries()].toSorted(([a], [b]) => a.localeCompare(b))) {
  const [risk, age] = key.split(' ')
  console.log(
    `| ${risk} | ${age} | ${entry.seen} | ${entry.needed} | ${((entry.needed / entry.seen) * 100).toFixed(2)}% | ${Math.round(entry.tokens / entry.seen)} |`,
  )
}

console.log(
  `\nBaseline: ${repeats} calls in ${requests} requests (${((repeats / requests) * 100).toFixed(1)} per 100) repeat an earlier call, or read a file read before, within ${refetchWindow} requests, with the whole context.`,
)
