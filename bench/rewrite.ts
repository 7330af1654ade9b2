/**
 * Rewrite pipeline CPU time per request as a conversation grows: ~1 MB over 200 tool rounds, replayed
 * request by request through the real request-side pipeline (parse, view, plan, apply, serialize),
 * beside the unavoidable baseline of parsing and serializing the same body.
 * Usage: tsx bench/rewrite.ts [rounds]
 */
import { anthropicHook } from './standalone-hook.ts'

const rounds = Number(process.argv[2] ?? 200)
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
    if (!marks.has(round)) continue
    const log = result.kind === 'forward' ? result.prepared.log : result.log
    const report = (log?.['rewrite'] ?? {}) as Record<string, unknown>
    rows.push([
      String(round),
      `${(body.length / 1024).toFixed(0)} KB`,
      (baseline * 1000).toFixed(0),
      (elapsed * 1000).toFixed(0),
      String(report['cleared'] ?? 0),
      String(report['folded'] ?? 0),
    ])
  }
  return rows
}

for (const window of [200_000, 64_000]) {
  const rows = await run(window)
  console.log(`\nRewrite CPU per request, growing conversation, ${window.toLocaleString('en-US')}-token window (µs)`)
  console.log(['rounds', 'body', 'parse+serialize baseline', 'ctxgate rewrite', 'cleared', 'folded'].join(' | '))
  for (const row of rows) console.log(row.join(' | '))
}

// One request at a given size, cold (new conversation) and warm (the same request again: memo and frozen decisions hit).
console.log('\nRewrite CPU for one request by conversation size, 64k window (µs)')
console.log(['rounds', 'body', 'parse+serialize baseline', 'cold', 'warm'].join(' | '))
for (const size of [10, 100, 1_000]) {
  const hook = anthropicHook(64_000)
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
  const baselineStart = performance.now()
  Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))))
  const baseline = performance.now() - baselineStart
  let started = performance.now()
  await hook(body, {})
  const cold = performance.now() - started
  started = performance.now()
  await hook(body, {})
  const warm = performance.now() - started
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
