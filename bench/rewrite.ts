/**
 * Rewrite pipeline CPU time per request as a conversation grows: ~1 MB over 200 tool rounds, replayed
 * request by request through the real request-side pipeline (parse, view, plan, apply, serialize),
 * beside the unavoidable baseline of parsing and serializing the same body. Each growing run starts
 * from a fresh hook and is repeated `--passes` times; the tables print the median, so two checkouts
 * can be compared by running this same file in each (it needs only ./standalone-hook.ts).
 * A short session's few requests are too quick to time alone, so the last table replays many
 * 10-request sessions, each on a fresh hook, and prints the median per request.
 * Usage: tsx bench/rewrite.ts [rounds] [--passes 5] [--sessions 300]
 */
import { parseArgs } from 'node:util'
import { anthropicHook } from './standalone-hook.ts'

const { values, positionals } = parseArgs({
  options: { passes: { type: 'string', default: '5' }, sessions: { type: 'string', default: '300' } },
  allowPositionals: true,
})
const rounds = Number(positionals[0] ?? 200)
const passes = Math.max(1, Math.floor(Number(values.passes)) || 1)
const sessions = Math.max(1, Math.floor(Number(values.sessions)) || 1)
const outputChars = 5_000

function conversation(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [
    { role: 'user', content: 'Refactor the payment module and keep the tests green.' },
  ]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${round}: reading the next file.` },
        { type: 'tool_use', id, name: 'read_file', input: { path: `src/payments/file-${round}.ts` } },
      ],
    })
    const body = Array.from(
      { length: 80 },
      (_, line) =>
        `${String(line).padStart(4)}  const value${line} = await store.get(id${round}, { retry: ${line % 5} }) // ${round}`,
    )
      .join('\n')
      .slice(0, outputChars)
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: body }] })
  }
  return messages
}

async function run(window: number): Promise<string[][]> {
  const hook = anthropicHook(window)
  const all = conversation()
  const rows: string[][] = []
  const marks = new Set([10, 25, 50, 100, 150, 200, rounds])
  // Means over every request so far: steadier than one request's time, and what a whole session costs.
  let baselineTotal = 0
  let rewriteTotal = 0
  for (let round = 1; round <= rounds; round++) {
    const body = Buffer.from(
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        system: 'You are a coding agent.',
        messages: all.slice(0, 2 * round + 1),
      }),
    )
    const baselineStart = performance.now()
    Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))))
    const baseline = performance.now() - baselineStart
    const started = performance.now()
    const result = await hook(body, {})
    const elapsed = performance.now() - started
    baselineTotal += baseline
    rewriteTotal += elapsed
    if (!marks.has(round)) continue
    const log = result.kind === 'forward' ? result.prepared.log : result.log
    const report = (log?.['rewrite'] ?? {}) as Record<string, unknown>
    rows.push([
      String(round),
      `${(body.length / 1024).toFixed(0)} KB`,
      (baseline * 1000).toFixed(0),
      (elapsed * 1000).toFixed(0),
      ((baselineTotal / round) * 1000).toFixed(0),
      ((rewriteTotal / round) * 1000).toFixed(0),
      String(report['cleared'] ?? 0),
      String(report['folded'] ?? 0),
    ])
  }
  return rows
}

function median(samples: readonly number[]): number {
  const sorted = samples.toSorted((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

for (const window of [200_000, 64_000]) {
  const runs: string[][][] = []
  for (let pass = 0; pass < passes; pass++) runs.push(await run(window))
  // Median over passes of the timing columns; the rest is the same in every pass.
  const rows = (runs[0] as string[][]).map((row, index) =>
    row.map((cell, column) =>
      column >= 2 && column <= 5
        ? median(runs.map((pass) => Number((pass[index] as string[])[column]))).toFixed(0)
        : cell,
    ),
  )
  console.log(`\nRewrite CPU per request, growing conversation, ${window.toLocaleString('en-US')}-token window (µs)`)
  console.log(
    [
      'rounds',
      'body',
      'parse+serialize baseline',
      'ctxgate rewrite',
      'baseline, mean so far',
      'rewrite, mean so far',
      'cleared',
      'folded',
    ].join(' | '),
  )
  for (const row of rows) console.log(row.join(' | '))
}

// One request at a given size, cold (new conversation) and warm (the same request again: memo and frozen decisions hit).
console.log('\nRewrite CPU for one request by conversation size, 64k window (µs)')
console.log(['rounds', 'body', 'parse+serialize baseline', 'cold', 'warm'].join(' | '))
for (const size of [10, 100, 1_000]) {
  const messages = conversation().slice(0, 1)
  for (let round = 0; round < size; round++) {
    const source = conversation()
    messages.push(
      ...source
        .slice(1 + 2 * (round % rounds), 3 + 2 * (round % rounds))
        .map(
          (message) =>
            JSON.parse(JSON.stringify(message).replaceAll(`toolu_${round % rounds}`, `toolu_x${round}`)) as Record<
              string,
              unknown
            >,
        ),
    )
  }
  const body = Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages }))
  const baselines: number[] = []
  const colds: number[] = []
  const warms: number[] = []
  for (let pass = 0; pass < passes; pass++) {
    const hook = anthropicHook(64_000)
    let started = performance.now()
    Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))))
    baselines.push(performance.now() - started)
    started = performance.now()
    await hook(body, {})
    colds.push(performance.now() - started)
    started = performance.now()
    await hook(body, {})
    warms.push(performance.now() - started)
  }
  const [baseline, cold, warm] = [median(baselines), median(colds), median(warms)]
  console.log(
    [
      String(size),
      `${(body.length / 1024).toFixed(0)} KB`,
      (baseline * 1000).toFixed(0),
      (cold * 1000).toFixed(0),
      (warm * 1000).toFixed(0),
    ].join(' | '),
  )
}

// Many short sessions: each a fresh hook taking a conversation from 1 to 10 rounds (hooks built before timing).
console.log(`\nRewrite CPU per request over ${sessions} sessions of 10 requests, median of their means (µs)`)
console.log(['window', 'ctxgate rewrite'].join(' | '))
for (const window of [200_000, 64_000]) {
  const all = conversation()
  const bodies = Array.from({ length: 10 }, (_, round) =>
    Buffer.from(
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        system: 'You are a coding agent.',
        messages: all.slice(0, 2 * (round + 1) + 1),
      }),
    ),
  )
  const hooks = Array.from({ length: sessions }, () => anthropicHook(window))
  const means: number[] = []
  for (const hook of hooks) {
    const started = performance.now()
    for (const body of bodies) await hook(body, {})
    means.push((performance.now() - started) / bodies.length)
  }
  // The first sessions warm the JIT up: leave out an eighth.
  console.log(
    [window.toLocaleString('en-US'), (median(means.slice(Math.floor(sessions / 8))) * 1000).toFixed(0)].join(' | '),
  )
}
