/**
 * The live page under agent-like traffic: how long after an answer reaches the agent the open page
 * shows it, and the screenshot in docs/. Run with `npx tsx bench/live-page.ts [--screenshot docs/live-page.png]`.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { runAgentSession } from '../test/helpers/agent-traffic.ts'
import { launchChromium } from '../test/helpers/browser.ts'
import { startStack } from '../test/helpers/stack.ts'

const { values } = parseArgs({ options: { screenshot: { type: 'string' }, steps: { type: 'string' } } })
const steps = Number(values.steps ?? 40)
const window = 120_000

const stack = await startStack({
  config: {
    log: { level: 'silent' },
    models: [{ match: '*', window, budget: 0.5, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
  },
  mock: { window },
})
const browser = await launchChromium()
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, deviceScaleFactor: 1 })
await page.goto(`${stack.proxyUrl}/ctxgate/`)
await page.locator('#status.live').waitFor()

const claudeCode = (session: string): Anthropic =>
  new Anthropic({
    baseURL: stack.proxyUrl,
    apiKey: 'sk-ant-bench',
    maxRetries: 0,
    defaultHeaders: { 'user-agent': 'claude-cli/2.0.14 (external, cli)', 'x-ctxgate-session': session },
  })

// A finished sub-agent and a short Codex session first, so the list has more than one row.
await runAgentSession({
  client: claudeCode('sub-agent'),
  model: 'claude-haiku-4-5',
  steps: 12,
  outputChars: 6_000,
  marker: 'sub',
})
const codex = new OpenAI({
  baseURL: `${stack.proxyUrl}/v1`,
  apiKey: 'sk-bench',
  maxRetries: 0,
  defaultHeaders: { 'user-agent': 'codex_cli_rs/0.50.0 (Debian 12; x86_64)' },
})
const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Refactor the parser module.' }]
for (let turn = 0; turn < 6; turn++) {
  const answer = await codex.chat.completions.create({
    model: 'gpt-5',
    messages: history,
    prompt_cache_key: 'codex-thread',
  })
  history.push(answer.choices[0]!.message, { role: 'user', content: `Output of step ${turn}: ${'ok '.repeat(1_500)}` })
}

// The main session: time from each answer to the page drawing its bar.
const latencies: number[] = []
await runAgentSession({
  client: claudeCode('main-session'),
  model: 'claude-sonnet-4-5',
  steps,
  outputChars: 14_000,
  marker: 'main',
  afterEach: async (request) => {
    const answered = performance.now()
    await page.locator(`#chart[data-drawn-bars="${request}"]`).waitFor()
    latencies.push(performance.now() - answered)
  },
})

const sorted = latencies.toSorted((a, b) => a - b)
const at = (q: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1)
console.log(
  `answer → bar on the open page, ${sorted.length} requests: median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`,
)

if (values.screenshot) {
  mkdirSync(dirname(values.screenshot), { recursive: true })
  await page.screenshot({ path: values.screenshot, fullPage: false })
  console.log(`screenshot: ${values.screenshot}`)
}
await browser.close()
await stack.close()
