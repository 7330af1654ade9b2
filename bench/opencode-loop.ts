/**
 * opencode in a long tool loop against the mock, straight and through ctxgate, side by side, over
 * its Anthropic provider and its OpenAI one: requests, billed-equivalent input, compactions,
 * largest prompt, steps done.
 *
 *   npx tsx bench/opencode-loop.ts [--steps 40] [--window 64000] [--output 8000] [--provider anthropic|openai|both] [--only direct|ctxgate]
 *
 * Needs the `opencode` binary (OPENCODE_BIN, or on PATH); it is not a dependency of this repo, so
 * the script says so and exits 0 without it. Each run gets its own XDG folders and config file
 * (OPENCODE_CONFIG), so nothing of the user's own opencode is read or written; opencode runs the
 * mock's harmless read-only commands for real, in a temp folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, untilHealthy } from './peers.ts'
import { isSummaryRequest } from '../src/mock/agent-loop.ts'
import { startMockServer, type RecordedRequest } from '../src/mock/server.ts'
import type { UsageTotals } from '../src/mock/usage-ledger.ts'

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '40' },
    window: { type: 'string', default: '64000' },
    output: { type: 'string', default: '8000' },
    provider: { type: 'string', default: 'both' },
    only: { type: 'string' },
    'timeout-s': { type: 'string', default: '1200' },
  },
})
const steps = Number(values.steps)
const window = Number(values.window)
const output = Number(values.output)
const timeoutMs = Number(values['timeout-s']) * 1000
const root = new URL('..', import.meta.url).pathname
const prompt = `Run ${steps} shell commands, one after another, and tell me when you are done.`
type Provider = 'anthropic' | 'openai'
const models: Record<Provider, string> = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-5' }

interface RunResult {
  readonly label: string
  readonly exitCode: number | null
  readonly wallSeconds: number
  readonly usage: UsageTotals
  readonly requests: number
  readonly refused: number
  readonly compactions: number
  readonly stepsDone: number
  readonly finished: boolean
}

function findOpencode(): string | undefined {
  const candidate = process.env['OPENCODE_BIN'] ?? 'opencode'
  return spawnSync(candidate, ['--version'], { encoding: 'utf8' }).status === 0 ? candidate : undefined
}

const entry = (match: string): string =>
  `  - { match: "${match}", window: ${window}, budget: 0.9, minCacheableTokens: 1024, thinkingBoundToPrefix: false }`

/** ctxgate from source, with the bench's window for both models (and a relative budget). */
async function startCtxgate(mockUrl: string, folder: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const config = join(folder, 'ctxgate.yaml')
  writeFileSync(config, `models:\n${entry('claude-sonnet-4-5*')}\n${entry('gpt-5*')}\n`)
  const args = ['--import', 'tsx', 'src/cli.ts', '--config', config, '--port', String(port), '--log-level', 'warn']
  const child = spawn(process.execPath, [...args, '--anthropic-url', mockUrl, '--openai-url', mockUrl], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  await untilHealthy(url, child, 60)
  return { url, child }
}

/** opencode.json for one run: the provider's base URL, the window and output limit, no sharing or updates. */
function opencodeConfig(provider: Provider, baseURL: string): unknown {
  const limit = { context: window, output }
  return {
    $schema: 'https://opencode.ai/config.json',
    model: `${provider}/${models[provider]}`,
    autoupdate: false,
    share: 'disabled',
    provider: { [provider]: { options: { baseURL, apiKey: 'dummy' }, models: { [models[provider]]: { limit } } } },
  }
}

function runOpencode(
  opencode: string,
  provider: Provider,
  baseURL: string,
  folder: string,
): Promise<{ code: number | null; stdout: string; seconds: number }> {
  const home = (name: string): string => {
    const path = join(folder, name)
    mkdirSync(path, { recursive: true })
    return path
  }
  const work = home('work')
  const configFile = join(folder, 'opencode.json')
  writeFileSync(configFile, JSON.stringify(opencodeConfig(provider, baseURL)))
  const started = performance.now()
  const child = spawn(opencode, ['run', '--auto', prompt], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      XDG_CONFIG_HOME: home('config'),
      XDG_DATA_HOME: home('data'),
      XDG_STATE_HOME: home('state'),
      XDG_CACHE_HOME: home('cache'),
      OPENCODE_CONFIG: configFile,
    },
  })
  let stdout = ''
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()))
  child.stderr?.resume()
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs)
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, seconds: (performance.now() - started) / 1000 })
    }),
  )
}

const isChat = (record: RecordedRequest): boolean =>
  record.method === 'POST' && /\/(messages|responses|chat\/completions)$/.test(record.url.split('?')[0] ?? '')

/** A compaction request: opencode's summarization agent, in its system prompt or instructions. */
function isCompaction(record: RecordedRequest): boolean {
  const body = JSON.parse(record.body || '{}') as Record<string, unknown>
  return isSummaryRequest(JSON.stringify(body['system'] ?? body['instructions'] ?? body['input'] ?? ''))
}

/** The newest step whose result came back, from the step ids the mock puts in its call ids. */
function stepsDone(records: readonly RecordedRequest[]): number {
  let newest = 0
  for (const record of records)
    for (const match of record.body.matchAll(/_mock_s(\d+)_\d+/g)) newest = Math.max(newest, Number(match[1]))
  return newest
}

async function runOnce(opencode: string, provider: Provider, label: 'direct' | 'ctxgate'): Promise<RunResult> {
  const folder = mkdtempSync(join(tmpdir(), 'ctxgate-opencode-loop-'))
  const mock = await startMockServer({ agentSteps: steps, window, logLimit: 100_000 })
  const proxy = label === 'ctxgate' ? await startCtxgate(mock.url, folder) : undefined
  try {
    process.stderr.write(`running opencode ${provider} ${label} (${steps} steps, window ${window})…\n`)
    // Through ctxgate the Anthropic base URL has no /v1 (opencode appends /messages); the mock needs it.
    const base = proxy ? (provider === 'anthropic' ? proxy.url : `${proxy.url}/v1`) : `${mock.url}/v1`
    const run = await runOpencode(opencode, provider, base, folder)
    const chats = mock.requests.filter(isChat)
    return {
      label: `${provider} ${label}`,
      exitCode: run.code,
      wallSeconds: run.seconds,
      usage: mock.usage.totals(),
      requests: chats.length,
      refused: chats.filter((record) => record.status !== 200).length,
      compactions: chats.filter(isCompaction).length,
      stepsDone: stepsDone(chats),
      finished: run.stdout.includes(`All ${steps} steps are done`) || /Done: ran \d+ commands/.test(run.stdout),
    }
  } finally {
    proxy?.child.kill('SIGTERM')
    await mock.close()
    rmSync(folder, { recursive: true, force: true })
  }
}

const thousands = (value: number): string => value.toLocaleString('en-US')

function table(results: readonly RunResult[]): string {
  const rows: [string, (result: RunResult) => string][] = [
    ['exit code', (result) => String(result.exitCode)],
    ['finished (final answer)', (result) => (result.finished ? 'yes' : 'no')],
    ['steps done', (result) => `${result.stepsDone}/${steps}`],
    ['wall time', (result) => `${result.wallSeconds.toFixed(1)} s`],
    ['model requests', (result) => String(result.requests)],
    ['refused (non-200)', (result) => String(result.refused)],
    ['opencode compactions', (result) => String(result.compactions)],
    ['billed-equivalent input', (result) => thousands(result.usage.billedEquivalentInput)],
    ['cache-read share', (result) => `${(result.usage.cacheReadShare * 100).toFixed(1)} %`],
    ['largest prompt', (result) => thousands(result.usage.largestPromptTokens)],
  ]
  const header = `| opencode, ${steps} steps, window ${thousands(window)}, output ${thousands(output)} | ${results.map((result) => result.label).join(' | ')} |`
  const rule = `|---|${results.map(() => '---:').join('|')}|`
  return [header, rule, ...rows.map(([name, cell]) => `| ${name} | ${results.map(cell).join(' | ')} |`)].join('\n')
}

const opencode = findOpencode()
if (!opencode) {
  process.stdout.write(
    'skipped: the opencode binary is not installed (npm i --prefix a scratch folder opencode-ai and set OPENCODE_BIN, or put opencode on PATH)\n',
  )
  process.exit(0)
}
const providersToRun: Provider[] =
  values.provider === 'anthropic' || values.provider === 'openai' ? [values.provider] : ['anthropic', 'openai']
const labels: ('direct' | 'ctxgate')[] =
  values.only === 'direct' || values.only === 'ctxgate' ? [values.only] : ['direct', 'ctxgate']
const results: RunResult[] = []
for (const provider of providersToRun)
  for (const label of labels) results.push(await runOnce(opencode, provider, label))
process.stdout.write(`${table(results)}\n`)
