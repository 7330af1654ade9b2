/**
 * Rewrite pipeline CPU time per request as a conversation grows: ~1 MB over 200 tool rounds, replayed
 * request by request through the real request-side pipeline (parse, view, plan, apply, serialize),
 * beside the unavoidable baseline of parsing and serializing the same body. Each growing run starts
 * from a fresh hook and is repeated `--passes` times; the tables print the median, so two checkouts
 * can be compared by running this same file in each (it needs only ./standalone-hook.ts).
 * A short session's few requests are too quick to time alone, so the last table replays many
 * 10-request sessions, each on a fresh hook, and prints the median per request.
 * With --reference, each table also times a hook that counts every prompt by the reference
 * vocabulary as well (docs/estimates.md), passes interleaved with the plain hook's.
 * With --cpu, every time is this process's CPU time instead of wall time: steadier on a loaded machine.
 * Usage: tsx bench/rewrite.ts [rounds] [--passes 5] [--sessions 300] [--reference] [--cpu]
 */
import { parseArgs } from 'node:util'
import { anthropicHook, loadReference } from './standalone-hook.ts'

const { values, positionals } = parseArgs({
  options: {
    passes: { type: 'string', default: '5' },
    sessions: { type: 'string', default: '300' },
    reference: { type: 'boolean', default: false },
    cpu: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const rounds = Number(positionals[0] ?? 200)
const passes = Math.max(1, Math.floor(Number(values.passes)) || 1)
const sessions = Math.max(1, Math.floor(Number(values.sessions)) || 1)
const outputChars = 5_000
/** Milliseconds: wall time, or with --cpu this process's CPU time (user and system, all its threads). */
const now = values.cpu
  ? (): number => {
      const used = process.cpuUsage()
      return (used.user + used.system) / 1000
    }
  : (): number => performance.now()
/** The hooks each table times: the plain one, and with --reference the one that also counts by the reference vocabulary. */
const variants: readonly boolean[] = values.reference ? [false, true] : [false]
if (values.reference) await loadReference()
const timingHeads = (head: string): string[] => (values.reference ? [head, `${head} + reference count`] : [head])

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

async function run(window: number, reference: boolean): Promise<string[][]> {
  const hook = anthropicHook(window, {}, { reference })
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
    const baselineStart = now()
    Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))))
    const baseline = now() - baselineStart
    const started = now()
    const result = await hook(body, {})
    const elapsed = now() - started
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
  const runs = variants.map((): string[][][] => [])
  for (let pass = 0; pass < passes; pass++)
    for (const [variant, reference] of variants.entries()) runs[variant]?.push(await run(window, reference))
  // Median over passes of the timing columns; the rest is the same in every pass.
  const medianRows = (passesOf: string[][][]): string[][] =>
    (passesOf[0] as string[][]).map((row, index) =>
      row.map((cell, column) =>
        column >= 2 && column <= 5
          ? median(passesOf.map((pass) => Number((pass[index] as string[])[column]))).toFixed(0)
          : cell,
      ),
    )
  const [plain, counted] = runs.map(medianRows)
  // With --reference: the reference hook's rewrite and mean-so-far columns beside the plain hook's.
  const rows = (plain as string[][]).map((row, index) =>
    counted === undefined
      ? row
      : [
          ...row.slice(0, 4),
          (counted[index] as string[])[3] as string,
          ...row.slice(4, 6),
          (counted[index] as string[])[5] as string,
          ...row.slice(6),
        ],
  )
  console.log(`\nRewrite CPU per request, growing conversation, ${window.toLocaleString('en-US')}-token window (µs)`)
  console.log(
    [
      'rounds',
      'body',
      'parse+serialize baseline',
      ...timingHeads('ctxgate rewrite'),
      'baseline, mean so far',
      ...timingHeads('rewrite, mean so far'),
      'cleared',
      'folded',
    ].join(' | '),
  )
  for (const row of rows) console.log(row.join(' | '))
}

// One request at a given size, cold (new conversation) and warm (the same request again: memo and frozen decisions hit).
console.log('\nRewrite CPU for one request by conversation size, 64k window (µs)')
console.log(['rounds', 'body', 'parse+serialize baseline', ...timingHeads('cold'), ...timingHeads('warm')].join(' | '))
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
  const colds = variants.map((): number[] => [])
  const warms = variants.map((): number[] => [])
  for (let pass = 0; pass < passes; pass++) {
    let started = now()
    Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))))
    baselines.push(now() - started)
    for (const [variant, reference] of variants.entries()) {
      const hook = anthropicHook(64_000, {}, { reference })
      started = now()
      await hook(body, {})
      colds[variant]?.push(now() - started)
      started = now()
      await hook(body, {})
      warms[variant]?.push(now() - started)
    }
  }
  const micros = (samples: readonly number[]): string => (median(samples) * 1000).toFixed(0)
  console.log(
    [
      String(size),
      `${(body.length / 1024).toFixed(0)} KB`,
      micros(baselines),
      ...colds.map(micros),
      ...warms.map(micros),
    ].join(' | '),
  )
}

// Many short sessions: each a fresh hook taking a conversation from 1 to 10 rounds (hooks built before timing).
console.log(`\nRewrite CPU per request over ${sessions} sessions of 10 requests, median of their means (µs)`)
console.log(['window', ...timingHeads('ctxgate rewrite')].join(' | '))
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
  const hooks = Array.from({ length: sessions }, () =>
    variants.map((reference) => anthropicHook(window, {}, { reference })),
  )
  const means = variants.map((): number[] => [])
  for (const pair of hooks)
    for (const [variant, hook] of pair.entries()) {
      const started = now()
      for (const body of bodies) await hook(body, {})
      means[variant]?.push((now() - started) / bodies.length)
    }
  // The first sessions warm the JIT up: leave out an eighth.
  const cells = means.map((each) => (median(each.slice(Math.floor(sessions / 8))) * 1000).toFixed(0))
  console.log([window.toLocaleString('en-US'), ...cells].join(' | '))
}
