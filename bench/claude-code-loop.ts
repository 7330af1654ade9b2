/**
 * Claude Code in a long tool loop against the mock, straight and through ctxgate, side by side:
 * requests, billed-equivalent input, cache-read share, whether Claude Code compacted, wall time.
 *
 *   npx tsx bench/claude-code-loop.ts [--steps 40] [--window 200000] [--model claude-sonnet-4-5] [--only direct|ctxgate]
 *     [--cache-writes literal|strict]   (the mock's reading of the cache-write rule, docs/economy.md)
 *     [--reread-every N]   (the mock's re-read loop: every N-th step reads again a file read many steps before)
 *     [--learn N]          (then N more sessions one after another through one ctxgate: sessions finish
 *                           after 1.5 s idle there, so each learns how long such sessions run from those before)
 *
 * Needs the `claude` binary (CLAUDE_BIN, or on PATH); it is not a dependency of this repo, so the
 * script says so and exits 0 without it. Claude Code runs its Bash tool for real, in a temp folder,
 * on the mock's harmless read-only commands. The environment passes through to Claude Code, e.g.
 * CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000 makes it compact on its own before the mock's window.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { freePort, untilHealthy } from './peers.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { isSummaryRequest } from '../src/mock/agent-loop.ts'
import { startMockServer, type MockServer, type RecordedRequest } from '../src/mock/server.ts'
import type { UsageTotals } from '../src/mock/usage-ledger.ts'
import {
  bestSchedule,
  scheduleCost,
  scheduleFloorOf,
  type ScheduleFloor,
  type ToolLoop,
} from '../src/replay/best-schedule.ts'
import { batchRequestsOf, NotAToolLoop, toolLoopOf } from './tool-loop-rounds.ts'

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '40' },
    window: { type: 'string', default: '200000' },
    model: { type: 'string', default: 'claude-sonnet-4-5' },
    only: { type: 'string' },
    learn: { type: 'string', default: '1' },
    'timeout-s': { type: 'string', default: '1800' },
    'reread-every': { type: 'string' },
    'cache-writes': { type: 'string', default: 'literal' },
  },
})
const rereadEvery = values['reread-every'] === undefined ? undefined : Number(values['reread-every'])
const cacheWrites = values['cache-writes'] === 'strict' ? 'strict' : 'literal'
const steps = Number(values.steps)
/** Idle time after which the learning runs' ctxgate counts a session as finished. */
const learningIdleMs = 1_500
const window = Number(values.window)
const model = values.model
const timeoutMs = Number(values['timeout-s']) * 1000
const root = new URL('..', import.meta.url).pathname
const prompt = `Run ${steps} shell commands, one after another, and tell me when you are done.`

interface RunResult {
  readonly label: string
  readonly exitCode: number | null
  readonly wallSeconds: number
  readonly usage: UsageTotals
  readonly messageRequests: number
  readonly refused: number
  readonly retries: number
  readonly compactions: number
  readonly toolResultsInLastRequest: number
  readonly resultText: string
  readonly stderrTail: string
  readonly ctxgate?: {
    readonly tokensRemoved: number
    readonly prefixBreaks: number
    readonly refusalsAvoided: number
    /** What /ctxgate/sessions and the live page say was saved: 1 − billed ÷ unedited. */
    readonly sessionsSaved: number
    readonly livePageSaved: number
    readonly compactionsAvoided: number
    readonly refetches: number
    readonly refetchTokens: number
    /** The live page's "re-fetches" total, read off its snapshot. */
    readonly livePageRefetches: number
  }
  /** The run's rounds as the mock counted them, with ctxgate's note and with an empty one (ctxgate runs only). */
  readonly loops?: { readonly note: ToolLoop; readonly empty: ToolLoop; readonly batchAt: readonly number[] }
}

function findClaude(): string | undefined {
  const candidate = process.env['CLAUDE_BIN'] ?? 'claude'
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' })
  return probe.status === 0 ? candidate : undefined
}

/** ctxgate as a user runs it: the CLI from source, pointed at the mock. */
async function startCtxgate(
  mockUrl: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  // For looking into a run: ctxgate's request log (info level), written where the variable says.
  const logFile = process.env['CTXGATE_BENCH_LOG']
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli.ts',
      '--anthropic-url',
      mockUrl,
      '--port',
      String(port),
      '--log-level',
      logFile ? 'info' : 'warn',
    ],
    { cwd: root, env, stdio: ['ignore', logFile ? openSync(logFile, 'w') : 'ignore', 'inherit'] },
  )
  const url = `http://127.0.0.1:${port}`
  await untilHealthy(url, child, 20)
  return { url, child }
}

function runClaude(
  claude: string,
  baseUrl: string,
): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const folder = mkdtempSync(join(tmpdir(), 'ctxgate-claude-loop-'))
  const started = performance.now()
  const child = spawn(claude, ['-p', prompt, '--model', model, '--allowedTools', 'Bash', '--output-format', 'json'], {
    cwd: folder,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: 'dummy',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()))
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()))
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs)
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer)
      rmSync(folder, { recursive: true, force: true })
      resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 })
    }),
  )
}

/** The Messages calls the mock recorded (token counting left out). */
function chatRequests(records: readonly RecordedRequest[]): RecordedRequest[] {
  return records.filter(
    (record) =>
      record.url.startsWith('/v1/messages') &&
      record.method === 'POST' &&
      !record.url.startsWith('/v1/messages/count_tokens'),
  )
}

function lastUserText(record: RecordedRequest): string {
  const body = JSON.parse(record.body) as { messages?: { role: string; content: unknown }[] }
  const last = body.messages?.[body.messages.length - 1]
  if (!last || last.role !== 'user') return ''
  const content = last.content
  if (typeof content === 'string') return content
  return Array.isArray(content) ? content.map((block: { text?: string }) => block.text ?? '').join('\n') : ''
}

function toolResultsIn(record: RecordedRequest | undefined): number {
  return record ? (record.body.match(/"type":"tool_result"/g) ?? []).length : 0
}

async function ctxgateSession(url: string): Promise<RunResult['ctxgate']> {
  const response = await request(`${url}/ctxgate/sessions?limit=50`)
  const { sessions } = (await response.body.json()) as { sessions: Record<string, number>[] }
  const sum = (key: string): number => sessions.reduce((total, session) => total + (Number(session[key]) || 0), 0)
  const live = await livePageTotals(url)
  return {
    tokensRemoved: sum('tokensRemoved'),
    prefixBreaks: sum('prefixBreaks'),
    refusalsAvoided: sum('refusalsAvoided'),
    sessionsSaved: 1 - sum('billedTokens') / Math.max(1, sum('uneditedBilledTokens')),
    livePageSaved: 1 - live.billed / Math.max(1, live.unedited),
    compactionsAvoided: live.compactionsAvoided,
    refetches: sum('refetches'),
    refetchTokens: sum('refetchTokens'),
    livePageRefetches: live.refetches,
  }
}

/** The live page's totals, read from the snapshot its event stream opens with (what the page sums). */
async function livePageTotals(
  url: string,
): Promise<{ billed: number; unedited: number; compactionsAvoided: number; refetches: number }> {
  const response = await request(`${url}/ctxgate/events`)
  let text = ''
  for await (const chunk of response.body) {
    text += (chunk as Buffer).toString('utf8')
    if (/event: snapshot\ndata: .*\n\n/.test(text)) break
  }
  response.body.destroy()
  const data = /event: snapshot\ndata: (.*)\n\n/.exec(text)?.[1] ?? '{"sessions":[]}'
  // For looking into a run: the page's whole snapshot, written where the variable says.
  const dump = process.env['CTXGATE_BENCH_SNAPSHOT']
  if (dump) writeFileSync(dump, data)
  const sessions = (JSON.parse(data) as { sessions: { summary: Record<string, number> }[] }).sessions
  const sum = (key: string): number => sessions.reduce((total, view) => total + (Number(view.summary[key]) || 0), 0)
  return {
    billed: sum('billedTokens'),
    unedited: sum('uneditedBilledTokens'),
    compactionsAvoided: sum('compactionsAvoided'),
    refetches: sum('refetches'),
  }
}

async function runOnce(claude: string, label: 'direct' | 'ctxgate'): Promise<RunResult> {
  const mock: MockServer = await startMockServer({
    agentSteps: steps,
    window,
    logLimit: 100_000,
    cacheWrites,
    ...(rereadEvery === undefined ? {} : { agentRereadEvery: rereadEvery }),
  })
  const proxy = label === 'ctxgate' ? await startCtxgate(mock.url) : undefined
  try {
    process.stderr.write(`running Claude Code ${label} (${steps} steps, window ${window})…\n`)
    const run = await runClaude(claude, proxy?.url ?? mock.url)
    const chats = chatRequests(mock.requests)
    let resultText = run.stdout.trim()
    try {
      resultText = String((JSON.parse(run.stdout) as { result?: unknown }).result ?? resultText)
    } catch {
      // Not JSON: Claude Code printed an error; keep its text.
    }
    return {
      label,
      exitCode: run.code,
      wallSeconds: run.seconds,
      usage: mock.usage.totals(),
      messageRequests: chats.length,
      refused: chats.filter((record) => record.status !== 200).length,
      retries: chats.filter((record) => Number(record.headers['x-stainless-retry-count'] ?? 0) > 0).length,
      compactions: chats.filter((record) => isSummaryRequest(lastUserText(record))).length,
      toolResultsInLastRequest: toolResultsIn(chats[chats.length - 1]),
      resultText: resultText.slice(0, 160),
      stderrTail: run.stderr.trim().split('\n').slice(-5).join('\n'),
      ...(proxy ? { ctxgate: await ctxgateSession(proxy.url), ...loopsOf(chats) } : {}),
    }
  } finally {
    proxy?.child.kill('SIGTERM')
    await mock.close()
  }
}

function loopsOf(chats: readonly RecordedRequest[]): Pick<RunResult, 'loops'> {
  const bodies = chats.filter((record) => record.status === 200).map((record) => record.body)
  try {
    return { loops: { note: toolLoopOf(bodies), empty: toolLoopOf(bodies, ''), batchAt: batchRequestsOf(bodies) } }
  } catch (error) {
    if (error instanceof NotAToolLoop) return {}
    throw error
  }
}

const thousands = (value: number): string => value.toLocaleString('en-US')
const pct = (share: number): string => `${(share * 100).toFixed(1)} %`

/** What the best batch schedule, chosen with hindsight, would have billed on this run's rounds under each floor. */
function boundTable(loops: NonNullable<RunResult['loops']>, ctxgateBilled: number, directBilled?: number): string {
  const floor: ScheduleFloor = scheduleFloorOf(loadConfig().economy)
  const ratio = (billed: number): string => (directBilled ? `${(billed / directBilled).toFixed(3)}×` : '-')
  const best = bestSchedule(loops.note, floor)
  const rows: [string, number][] = [
    [
      `default floor: newest ${floor.keepNewestRounds} rounds whole, from ${thousands(floor.startTokens)} tokens`,
      best.billed,
    ],
    ['default floor, cleared results left empty', bestSchedule(loops.empty, floor).billed],
    ['start at 50,000 tokens', bestSchedule(loops.note, { ...floor, startTokens: 50_000 }).billed],
    ['newest 2 rounds whole', bestSchedule(loops.note, { ...floor, keepNewestRounds: 2 }).billed],
    ['newest 1 round whole', bestSchedule(loops.note, { ...floor, keepNewestRounds: 1 }).billed],
  ]
  const own = ownScheduleCost(loops, floor)
  return [
    `The best schedule under the default floor batches at requests ${best.batchAt.join(', ') || 'none'}.`,
    `ctxgate batched at requests ${loops.batchAt.join(', ') || 'none'}.`,
    '',
    `| best batch schedule with hindsight, ${loops.note.rounds.length} rounds | billed-equivalent input | × direct |`,
    '|---|---:|---:|',
    `| ctxgate's own schedule, as run (billed by the mock) | ${thousands(Math.round(ctxgateBilled))} | ${ratio(ctxgateBilled)} |`,
    `| ctxgate's batch times as whole batches (priced like the rows below) | ${thousands(Math.round(own.billed))} | ${ratio(own.billed)} |`,
    ...rows.map(([name, billed]) => `| ${name} | ${thousands(Math.round(billed))} | ${ratio(billed)} |`),
  ].join('\n')
}

/**
 * ctxgate's own batch times priced by the same model as the best schedule (each a whole batch), so
 * the two compare like for like: the mock bills what was really sent, which the model only approximates.
 * A batch the floor does not allow there (ctxgate's over-budget ones, before the start point) is left out.
 */
function ownScheduleCost(loops: NonNullable<RunResult['loops']>, floor: ScheduleFloor): { billed: number } {
  let batchAt = [...loops.batchAt]
  for (;;) {
    try {
      return { billed: scheduleCost(loops.note, floor, batchAt) }
    } catch (error) {
      const refused = error instanceof RangeError ? /request (\d+)/.exec(error.message)?.[1] : undefined
      if (refused === undefined) throw error
      batchAt = batchAt.filter((request) => request !== Number(refused))
    }
  }
}

function table(results: readonly RunResult[]): string {
  const rows: [string, (result: RunResult) => string][] = [
    ['exit code', (result) => String(result.exitCode)],
    ['wall time', (result) => `${result.wallSeconds.toFixed(1)} s`],
    ['Messages requests', (result) => String(result.messageRequests)],
    ['refused (non-200)', (result) => String(result.refused)],
    ['retried by Claude Code', (result) => String(result.retries)],
    ['Claude Code compactions', (result) => String(result.compactions)],
    ['billed-equivalent input', (result) => thousands(result.usage.billedEquivalentInput)],
    ['  input', (result) => thousands(result.usage.inputTokens)],
    ['  cache write 5m', (result) => thousands(result.usage.cacheWrite5mTokens)],
    ['  cache write 1h', (result) => thousands(result.usage.cacheWrite1hTokens)],
    ['  cache read', (result) => thousands(result.usage.cacheReadTokens)],
    ['cache-read share', (result) => `${(result.usage.cacheReadShare * 100).toFixed(1)} %`],
    ['largest prompt', (result) => thousands(result.usage.largestPromptTokens)],
    ['output', (result) => thousands(result.usage.outputTokens)],
    ['tokens removed by ctxgate', (result) => (result.ctxgate ? thousands(result.ctxgate.tokensRemoved) : '-')],
    ['prefix breaks (ctxgate)', (result) => (result.ctxgate ? String(result.ctxgate.prefixBreaks) : '-')],
    ['refusals avoided (ctxgate)', (result) => (result.ctxgate ? String(result.ctxgate.refusalsAvoided) : '-')],
    ['compactions avoided (live page)', (result) => (result.ctxgate ? String(result.ctxgate.compactionsAvoided) : '-')],
    ['saved, as the live page says', (result) => (result.ctxgate ? pct(result.ctxgate.livePageSaved) : '-')],
    ['saved, as /ctxgate/sessions says', (result) => (result.ctxgate ? pct(result.ctxgate.sessionsSaved) : '-')],
    [
      're-fetches of cleared results, /ctxgate/sessions',
      (result) =>
        result.ctxgate ? `${result.ctxgate.refetches} (${thousands(result.ctxgate.refetchTokens)} tokens)` : '-',
    ],
    [
      're-fetches, as the live page says',
      (result) => (result.ctxgate ? String(result.ctxgate.livePageRefetches) : '-'),
    ],
  ]
  const header = `| Claude Code, ${steps} steps, window ${thousands(window)}${cacheWrites === 'strict' ? ', strict cache writes' : ''} | ${results.map((result) => result.label).join(' | ')} |`
  const rule = `|---|${results.map(() => '---:').join('|')}|`
  return [header, rule, ...rows.map(([name, cell]) => `| ${name} | ${results.map(cell).join(' | ')} |`)].join('\n')
}

const claude = findClaude()
if (!claude) {
  process.stdout.write(
    'skipped: the claude binary is not installed (install @anthropic-ai/claude-code in a scratch folder and set CLAUDE_BIN, or put claude on PATH)\n',
  )
  process.exit(0)
}
const labels: readonly ('direct' | 'ctxgate')[] =
  values.only === 'direct' || values.only === 'ctxgate' ? [values.only] : ['direct', 'ctxgate']
const results: RunResult[] = []
for (const label of labels) results.push(await runOnce(claude, label))
process.stdout.write(`${table(results)}\n\n`)
const ctxgateRun = results.find((result) => result.label === 'ctxgate')
if (ctxgateRun?.loops) {
  const direct = results.find((result) => result.label === 'direct')
  process.stdout.write(
    `${boundTable(ctxgateRun.loops, ctxgateRun.usage.billedEquivalentInput, direct?.usage.billedEquivalentInput)}\n\n`,
  )
}
const directRun = results.find((result) => result.label === 'direct')
if (directRun && ctxgateRun) {
  const measured = 1 - ctxgateRun.usage.billedEquivalentInput / directRun.usage.billedEquivalentInput
  process.stdout.write(`measured: billed-equivalent input ${pct(measured)} lower through ctxgate than direct\n\n`)
}
const learning = Number(values.learn)
if (learning > 1) process.stdout.write(`${await learningTable(claude, learning, directRun)}\n\n`)
for (const result of results) {
  process.stdout.write(`${result.label}: final answer: ${JSON.stringify(result.resultText)}\n`)
  if (result.stderrTail) process.stdout.write(`${result.label}: stderr: ${result.stderrTail}\n`)
}

/**
 * Sessions run one after another through one ctxgate, each billed on its own: the first knows
 * nothing of how long such sessions run, the later ones have the finished ones before them.
 */
async function learningTable(claude: string, sessions: number, direct: RunResult | undefined): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'ctxgate-claude-learn-'))
  const config = join(folder, 'learn.yaml')
  writeFileSync(config, `sessions:\n  idleTtlMs: ${learningIdleMs}\n`)
  const mock = await startMockServer({
    agentSteps: steps,
    window,
    logLimit: 100_000,
    cacheWrites,
    ...(rereadEvery === undefined ? {} : { agentRereadEvery: rereadEvery }),
  })
  const proxy = await startCtxgate(mock.url, { ...process.env, CTXGATE_CONFIG: config })
  const rows: string[] = []
  try {
    for (let session = 1; session <= sessions; session++) {
      const billedBefore = mock.usage.totals().billedEquivalentInput
      const seenBefore = mock.requests.length
      process.stderr.write(`running Claude Code through one ctxgate, session ${session} of ${sessions}…\n`)
      await runClaude(claude, proxy.url)
      const billed = mock.usage.totals().billedEquivalentInput - billedBefore
      const bodies = chatRequests(mock.requests.slice(seenBefore))
        .filter((record) => record.status === 200)
        .map((record) => record.body)
      const ratio = direct ? `${(billed / direct.usage.billedEquivalentInput).toFixed(3)}×` : '-'
      rows.push(`| ${session} | ${thousands(billed)} | ${ratio} | ${batchRequestsOf(bodies).join(', ') || 'none'} |`)
      await new Promise((resolve) => setTimeout(resolve, learningIdleMs + 500))
    }
  } finally {
    proxy.child.kill('SIGTERM')
    await mock.close()
    rmSync(folder, { recursive: true, force: true })
  }
  return [
    `Sessions one after another through one ctxgate (a session finishes after ${learningIdleMs / 1000} s idle; × direct: the direct run above):`,
    '',
    '| session | billed-equivalent input | × direct | ctxgate batched at requests |',
    '|---:|---:|---:|---|',
    ...rows,
  ].join('\n')
}
