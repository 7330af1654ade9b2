/**
 * What the system note costs the OpenAI prompt cache, per wire format and placement. Replays every
 * recording under a folder as OpenAI Chat Completions requests and as Responses requests (the
 * recording's system prompt as `instructions`, as SDK clients send it, and as a leading developer
 * message, as Codex sends it), through ctxgate to the fake upstream's OpenAI prefix cache, once per
 * placement: no note, `head` (at the first edit, at the head), `first-request` (at the head from the
 * first request), `auto` (at the first edit, right after the edited results). Prints a Markdown table.
 * Usage: tsx bench/note-placement.ts FOLDER [--windows 200000,64000] [--only NAME] [--all]
 */
import { existsSync, readdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'
import { startMockServer } from '../src/mock/server.ts'
import type { Conversation } from '../src/replay/conversation.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { requestsFor, type Format } from './openai-requests.ts'

type Json = Record<string, unknown>
type Placement = 'none' | 'head' | 'first-request' | 'auto'

const argument = (name: string): string | undefined => {
  const index = process.argv.indexOf(name)
  return index > 0 ? process.argv[index + 1] : undefined
}
const folder = process.argv[2]
if (folder === undefined || !existsSync(folder)) {
  console.error('usage: tsx bench/note-placement.ts FOLDER [--windows 200000,64000] [--only NAME] [--all]')
  process.exit(2)
}
const windows = (argument('--windows') ?? '200000,64000').split(',').map(Number)
const only = argument('--only')
const formats: readonly Format[] = ['chat', 'responses/instructions', 'responses/developer']
const placements: readonly Placement[] = ['none', 'head', 'first-request', 'auto']

/** OpenAI-format runs (OpenHands, mini-swe-agent): what these clients really send; with --all, the others too, converted. */
function conversationsUnder(directory: string): Conversation[] {
  const files = readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(jsonl|json)$/.test(name))
    .toSorted()
  return files.flatMap((name) => {
    const loaded = loadRecording(join(directory, name), { uncompacted: false })
    const openaiFormat = ['openhands', 'mini-swe-agent', 'openai-messages'].includes(loaded.format)
    return openaiFormat || process.argv.includes('--all') ? loaded.conversations : []
  })
}

interface Totals {
  requests: number
  refused: number
  prompt: number
  cached: number
  /** Cached tokens of the first request ctxgate edited, and the prompt tokens of the one before it. */
  firstCut: { cached: number; previousPrompt: number }[]
}

async function replayOnce(
  conversation: Conversation,
  format: Format,
  placement: Placement,
  window: number,
  totals: Totals,
): Promise<void> {
  const mock = await startMockServer({ window, logLimit: 1 })
  const config = loadConfig({
    overrides: {
      server: { port: 0, responseHeaders: true },
      log: { level: 'silent' },
      upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
      models: [{ match: '*', window, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
      rewrite: placement === 'none' ? { systemNote: false } : { systemNote: true, systemNotePlacement: placement },
    },
  })
  const app = await buildApp({ config, logger: createLogger('silent'), registry: new Registry() })
  await app.server.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`
  const dispatcher = new Agent({ headersTimeout: 600_000, bodyTimeout: 600_000 })
  let previousPrompt = 0
  let edited = false
  try {
    for (const sent of requestsFor(conversation, format)) {
      const answer = await request(`${base}${sent.path}`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
        body: JSON.stringify(sent.body),
      })
      const json = (await answer.body.json()) as Json
      totals.requests++
      if (answer.statusCode !== 200) {
        totals.refused++
        continue
      }
      const usage = json['usage'] as Json
      const prompt = Number(usage['prompt_tokens'] ?? usage['input_tokens'])
      const details = (usage['prompt_tokens_details'] ?? usage['input_tokens_details']) as Json
      const cached = Number(details['cached_tokens'] ?? 0)
      totals.prompt += prompt
      totals.cached += cached
      const edit = String(answer.headers['x-ctxgate-edit'] ?? 'none')
      if (process.env['NOTE_BENCH_TRACE'])
        console.error(
          `${conversation.id.slice(0, 20)} ${format} ${placement} #${totals.requests} prompt ${prompt} cached ${cached} ${edit} est ${String(answer.headers['x-ctxgate-estimate-before'])}→${String(answer.headers['x-ctxgate-estimate-after'])}`,
        )
      if (!edited && edit !== 'none') {
        edited = true
        totals.firstCut.push({ cached, previousPrompt })
      }
      previousPrompt = prompt
    }
  } finally {
    await app.server.close()
    await mock.close()
    await dispatcher.close()
  }
}

const thousands = (value: number): string => Math.round(value).toLocaleString('en-US')
const conversations = conversationsUnder(folder).filter((conversation) => !only || conversation.id.includes(only))
console.error(`${conversations.length} runs: ${conversations.map((conversation) => conversation.id).join(', ')}`)
const rows: string[] = []
for (const window of windows)
  for (const format of formats) {
    let noNote = Number.NaN
    for (const placement of placements) {
      const totals: Totals = { requests: 0, refused: 0, prompt: 0, cached: 0, firstCut: [] }
      const started = performance.now()
      for (const conversation of conversations) await replayOnce(conversation, format, placement, window, totals)
      // OpenAI bills cached input at 0.1× and, before GPT-5.6, writes nothing extra.
      const billed = totals.prompt - totals.cached + 0.1 * totals.cached
      if (placement === 'none') noNote = billed
      const cuts = totals.firstCut.map((cut) => `${thousands(cut.cached)} of ${thousands(cut.previousPrompt)}`)
      rows.push(
        `| ${window / 1000}k | ${format} | ${placement} | ${totals.requests} | ${totals.refused} | ${thousands(totals.prompt)} | ${thousands(totals.cached)} | ${thousands(billed)} | ${placement === 'none' ? '—' : `${billed - noNote >= 0 ? '+' : ''}${thousands(billed - noNote)} (${(((billed - noNote) / noNote) * 100).toFixed(2)}%)`} | ${cuts.join('; ') || '—'} |`,
      )
      console.error(`${window} ${format} ${placement}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
  }
console.log(
  `| window | format | note | requests | refused | prompt tokens | cached | billed-eq input | vs no note | first edited request: cached of the previous prompt |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|\n${rows.join('\n')}`,
)
