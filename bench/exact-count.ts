/**
 * What exact OpenAI counts cost beside the estimate, in one process: throughput on novel text of
 * several kinds (each string counted once, as a new tool output would be), and the per-request
 * cost of viewing a growing Chat Completions conversation, where the memo per string means only
 * the new messages are counted. Usage: tsx bench/exact-count.ts [rounds] (default 200)
 */
import { openaiChatAdapter } from '../src/providers/openai/chat-adapter.ts'
import { openaiExactCounters } from '../src/providers/openai/tokenizer/exact-counters.ts'
import { TokenEstimator } from '../src/rewrite/estimate.ts'
import { estimateTextTokens } from '../src/rewrite/estimate-text.ts'

const rounds = Number(process.argv[2] ?? 200)
const started = performance.now()
await new TokenEstimator(openaiExactCounters).ready('gpt-4o')
const loadMs = performance.now() - started

let seed = 1
const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const word = (): string => Math.floor(random() * 1e9).toString(36)
const kinds: Record<string, (size: number) => string> = {
  'English-like prose': (size) =>
    Array.from({ length: size / 6 }, word)
      .join(' ')
      .slice(0, size),
  'TypeScript-like code': (size) =>
    Array.from({ length: size / 40 }, (_, line) => `  const ${word()} = await ${word()}(${line}, { ${word()}: true })`)
      .join('\n')
      .slice(0, size),
  JSON: (size) => JSON.stringify(Array.from({ length: size / 30 }, () => ({ id: word(), n: random() }))).slice(0, size),
  CJK: (size) =>
    Array.from({ length: size }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 3_000))).join(''),
}

function throughput(count: (text: string) => number, make: (size: number) => string): number {
  const texts = Array.from({ length: 20 }, () => make(20_000))
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0)
  const start = performance.now()
  for (const text of texts) count(text)
  return bytes / 1e6 / ((performance.now() - start) / 1000)
}

const exact = new TokenEstimator(openaiExactCounters).forModel('gpt-4o')
const exactText = (text: string): number => exact.text(text + word())
console.log(`gpt-tokenizer o200k loaded in ${loadMs.toFixed(0)} ms (once per process, on the first OpenAI request)\n`)
console.log('Novel text, MB/s (UTF-8), each string counted once:\n\n| text | estimate | exact o200k |\n|---|---:|---:|')
for (const [kind, make] of Object.entries(kinds))
  console.log(
    `| ${kind} | ${throughput(estimateTextTokens, make).toFixed(0)} | ${throughput(exactText, make).toFixed(1)} |`,
  )

function conversation(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [{ role: 'user', content: 'Refactor the payment module.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `call_${round}`
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/${round}.ts"}` } }],
    })
    messages.push({ role: 'tool', tool_call_id: id, content: kinds['TypeScript-like code']?.(5_000) ?? '' })
  }
  return messages
}

function perRequest(estimator: TokenEstimator): { total: number; last: number } {
  const all = conversation()
  let total = 0
  let last = 0
  for (let round = 1; round <= rounds; round++) {
    const body = { model: 'gpt-4o', messages: all.slice(0, 1 + round * 2) }
    const start = performance.now()
    openaiChatAdapter.view(body, estimator)
    last = (performance.now() - start) * 1000
    total += last
  }
  return { total: total / rounds, last }
}
const estimated = perRequest(new TokenEstimator())
const counted = perRequest(new TokenEstimator(openaiExactCounters).forModel('gpt-4o'))
console.log(
  `\nViewing a growing Chat conversation (${rounds} rounds of 5 KB tool output), µs per request:\n\n| counter | mean over the session | last request |\n|---|---:|---:|\n| estimate | ${estimated.total.toFixed(0)} | ${estimated.last.toFixed(0)} |\n| exact o200k, memoised | ${counted.total.toFixed(0)} | ${counted.last.toFixed(0)} |`,
)
