/**
 * Recorded runs replayed as OpenAI Chat Completions and Responses requests (parallel tool calls kept
 * as one turn), straight to the fake upstream's OpenAI prefix cache and through ctxgate with its
 * defaults, side by side: billed-equivalent input (uncached + cached × the model's read price) and
 * the ratio per run. Usage: tsx bench/openai-long.ts FILE... [--window 1000000]
 */
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'
import { startMockServer } from '../src/mock/server.ts'
import type { Conversation } from '../src/replay/conversation.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { pricesFor } from '../src/billing/prices.ts'
import { requestsFor, type Format } from './openai-requests.ts'

type Json = Record<string, unknown>
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { window: { type: 'string', default: '1000000' }, model: { type: 'string', default: 'gpt-5.5' } },
})
if (positionals.length === 0) {
  process.stderr.write('usage: tsx bench/openai-long.ts FILE... [--window 1000000] [--model gpt-5.5]\n')
  process.exit(2)
}
const window = Number(values.window)
const model = values.model
const formats: readonly Format[] = ['chat', 'responses/instructions']

/** Billed-equivalent input of the run sent straight (`through` false) or through ctxgate. */
async function billedFor(conversation: Conversation, format: Format, through: boolean): Promise<number> {
  const mock = await startMockServer({ window, logLimit: 1 })
  const config = loadConfig({
    overrides: {
      server: { port: 0 },
      log: { level: 'silent' },
      upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
      models: [{ match: '*', window, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
    },
  })
  const read = pricesFor(config.economy.prices, model).cacheRead
  const app = through ? await buildApp({ config, logger: createLogger('silent'), registry: new Registry() }) : undefined
  if (app) await app.server.listen({ host: '127.0.0.1', port: 0 })
  const base = app ? `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}` : mock.url
  const dispatcher = new Agent({ headersTimeout: 600_000, bodyTimeout: 600_000 })
  let billed = 0
  try {
    for (const sent of requestsFor(conversation, format, model)) {
      const answer = await request(`${base}${sent.path}`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
        body: JSON.stringify(sent.body),
      })
      const json = (await answer.body.json()) as Json
      if (answer.statusCode !== 200) throw new Error(`${sent.path} answered ${answer.statusCode}`)
      const usage = json['usage'] as Json
      const prompt = Number(usage['prompt_tokens'] ?? usage['input_tokens'])
      const details = (usage['prompt_tokens_details'] ?? usage['input_tokens_details']) as Json | undefined
      const cached = Number(details?.['cached_tokens'] ?? 0)
      billed += prompt - cached + read * cached
    }
  } finally {
    await app?.server.close()
    await mock.close()
    await dispatcher.close()
  }
  return billed
}

const thousands = (value: number): string => Math.round(value).toLocaleString('en-US')
const conversations = positionals.flatMap((file) => loadRecording(file, { uncompacted: false }).conversations)
const lines = ['| format | run | direct | through ctxgate | ÷ direct |', '| --- | --- | ---: | ---: | ---: |']
for (const format of formats) {
  let direct = 0
  let through = 0
  let worst = 0
  for (const conversation of conversations) {
    const straight = await billedFor(conversation, format, false)
    const edited = await billedFor(conversation, format, true)
    direct += straight
    through += edited
    worst = Math.max(worst, edited / straight)
    lines.push(
      `| ${format} | ${conversation.id} | ${thousands(straight)} | ${thousands(edited)} | ${(edited / straight).toFixed(3)} |`,
    )
  }
  lines.push(
    `| ${format} | **all runs** (worst ${worst.toFixed(3)}) | ${thousands(direct)} | ${thousands(through)} | **${(through / direct).toFixed(3)}** |`,
  )
}
process.stdout.write(`Window ${thousands(window)}, model ${model}.\n\n${lines.join('\n')}\n`)
