/**
 * Rewrite CPU per request with the cache-priced economy against budget-only editing, A/B in one
 * process (interleaved request by request, so a loaded machine slows both alike): a conversation
 * growing to 200 tool rounds (~1 MB), replayed through the real request-side hook at 200k and 64k.
 * Usage: tsx bench/economy-cpu.ts [rounds] [passes]
 */
import { anthropicHook } from './standalone-hook.ts'
import type { PrepareBody } from '../src/request/prepared.ts'

const rounds = Number(process.argv[2] ?? 200)
const passes = Number(process.argv[3] ?? 5)

function conversation(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [{ role: 'user', content: 'Refactor the payment module.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `src/payments/file-${round}.ts` } }],
    })
    const body = Array.from({ length: 80 }, (_, line) => `${line} const v${line} = await get(id${round}) // ${round}`)
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: body.join('\n') }] })
  }
  return messages
}

function hookFor(economy: 'cache-priced' | 'budget-only', window: number): PrepareBody {
  return anthropicHook(window, { economy })
}

/** CPU microseconds (user + system) of one call. */
async function cpuOf(run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  await run()
  const used = process.cpuUsage(before)
  return used.user + used.system
}

const all = conversation()
const bodies = Array.from({ length: rounds }, (_, index) =>
  Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages: all.slice(0, 2 * index + 3) })),
)
const median = (values: number[]): number => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
console.log('window | budget-only µs/request | cache-priced µs/request | difference')
console.log('---|---:|---:|---:')
for (const window of [200_000, 64_000]) {
  const totals = { 'budget-only': [] as number[], 'cache-priced': [] as number[] }
  for (let pass = 0; pass < passes; pass++) {
    const hooks = { 'budget-only': hookFor('budget-only', window), 'cache-priced': hookFor('cache-priced', window) }
    const sums = { 'budget-only': 0, 'cache-priced': 0 }
    for (const [index, body] of bodies.entries()) {
      const order =
        index % 2 === 0 ? (['budget-only', 'cache-priced'] as const) : (['cache-priced', 'budget-only'] as const)
      for (const variant of order) sums[variant] += await cpuOf(() => hooks[variant](body, {}))
    }
    totals['budget-only'].push(sums['budget-only'] / rounds)
    totals['cache-priced'].push(sums['cache-priced'] / rounds)
  }
  const off = median(totals['budget-only'])
  const on = median(totals['cache-priced'])
  console.log(
    `${window.toLocaleString('en-US')} | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(((on - off) / off) * 100).toFixed(1)}%`,
  )
}
