import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { replay } from '../../src/cli/replay.ts'
import { buildAnthropicRequests } from '../../src/replay/build-requests.ts'
import { withinFloor } from '../../src/replay/floor-bound.ts'
import { replayConversation } from '../../src/replay/run-replay.ts'
import type { ChartData } from '../../src/replay/report/html.ts'
import { toJsonl } from '../../src/replay/conversation.ts'
import { syntheticRuns } from '../../src/replay/synthetic.ts'

const directory = mkdtempSync(join(tmpdir(), 'ctxgate-replay-it-'))
const [main, sub] = syntheticRuns()
const mainFile = join(directory, 'main.jsonl')
const subFile = join(directory, 'sub.jsonl')
writeFileSync(mainFile, toJsonl(main!))
writeFileSync(subFile, toJsonl(sub!))

describe('buildAnthropicRequests', () => {
  it('makes request k from everything before the k-th reply, marking the newest block in rolling mode', () => {
    const requests = buildAnthropicRequests(main!, { maxTokens: 100, clientCache: 'rolling', stream: false })
    const replies = main!.segments[0]!.filter((message) => message.role === 'assistant').length
    expect(requests).toHaveLength(replies)
    for (const replayed of requests) {
      const messages = replayed.body['messages'] as { role: string; content: Record<string, unknown>[] }[]
      expect(messages.at(-1)?.role).toBe('user')
      expect(messages.at(-1)?.content.at(-1)?.['cache_control']).toEqual({ type: 'ephemeral' })
      expect(
        messages.slice(0, -1).every((message) => message.content.every((block) => !('cache_control' in block))),
      ).toBe(true)
    }
    const plain = buildAnthropicRequests(main!, { maxTokens: 100, clientCache: 'none', stream: false })
    expect(JSON.stringify(plain.map((replayed) => replayed.body))).not.toContain('cache_control')
  })
})

describe('ctxgate replay', () => {
  it('replays runs straight and through ctxgate, counting refusals at a small window and cache reads with rolling marks', async () => {
    const output: string[] = []
    const informed: string[] = []
    // A folder that does not exist yet: replay makes it.
    const htmlFile = join(directory, 'new-folder', 'report.html')
    const report = await replay(
      { window: '64000', 'client-cache': 'rolling', stream: true, html: htmlFile },
      [mainFile, subFile],
      (text) => output.push(text),
      (text) => informed.push(text),
    )
    expect(informed).toEqual([`wrote ${htmlFile}\n`])
    expect(report?.runs.map((run) => run.name)).toEqual(['main-agent', 'sub-agent'])
    const [directTotal, ctxgateTotal] = report?.totals ?? []
    expect(directTotal?.variant).toBe('direct')
    expect(directTotal?.summary.requests).toBe(105)
    expect(directTotal?.summary.refusedForLength).toBeGreaterThan(0)
    expect(directTotal?.summary.usage.cacheReadTokens).toBeGreaterThan(
      directTotal?.summary.usage.cacheWrite5mTokens ?? 0,
    )
    // Through ctxgate nothing is refused, every prompt fits the window as the fake upstream counts it, and tokens were removed.
    expect(ctxgateTotal?.summary.refusedForLength).toBe(0)
    expect(ctxgateTotal?.summary.largestPromptTokens).toBeLessThanOrEqual(64_000)
    expect(ctxgateTotal?.summary.tokensRemoved).toBeGreaterThan(0)
    const text = output.join('')
    expect(text).toMatch(/all runs\s+direct\s+105/)
    // Direct bills less in total only because refused requests bill nothing: the text says so, per served request.
    const direct = directTotal?.summary
    const through = ctxgateTotal?.summary
    expect(direct?.served).toBe((direct?.requests ?? 0) - (direct?.refusedForLength ?? 0) - (direct?.failed ?? 0))
    expect(through?.billedPerServed).toBeCloseTo((through?.billedEquivalentInput ?? 0) / (through?.served ?? 1))
    expect(text).toContain(`Direct had ${direct?.refusedForLength} of 105 requests refused for length.`)
    expect(text).toMatch(
      /per served request: direct [\d,]+, ctxgate [\d,]+ \(÷ direct \d\.\d{3}\); ctxgate served 105 of 105\./,
    )
    const stopped = report?.directUntilFirstRefusal
    expect(stopped?.refusedForLength).toBe(0)
    expect(stopped?.requests).toBeLessThan(105)
    expect(text).toContain(
      `Stopped at its first refusal, as an agent would, direct serves ${stopped?.served} of 105 requests`,
    )
    expect(text).toContain('removed/req')
    expect(text).toContain('summed over a run it exceeds the run’s input')

    const html = readFileSync(htmlFile, 'utf8')
    expect(html.startsWith('<!doctype html>')).toBe(true)
    // Self-contained: uPlot and the chart code are inline, nothing is loaded from elsewhere.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/)
    const charts = [...html.matchAll(/<script type="application\/json" id="chart-\d+">(.*?)<\/script>/g)].map(
      (match) => JSON.parse(match[1] as string) as ChartData,
    )
    expect(charts).toHaveLength(4)
    const mainDirect = charts[0] as ChartData
    const mainRun = report?.runs[0]?.rows[0]?.summary
    expect(mainRun?.refusedForLength).toBeGreaterThan(0)
    expect(mainDirect.rows).toHaveLength(mainRun?.requests ?? -1)
    expect(mainDirect.rows.filter((row) => row.refused > 0)).toHaveLength(mainRun?.refusedForLength ?? -1)
    expect(mainDirect.rows.every((row) => row.window === 64_000)).toBe(true)
  })

  it('carries ctxgate’s own estimate of each request, so the floor’s untouchable part can be priced', async () => {
    const result = await replayConversation(main!, {
      window: 200_000,
      minCacheableTokens: 1_024,
      maxTokens: 100,
      clientCache: 'rolling',
      stream: false,
      variants: [{ label: 'direct', direct: true }, { label: 'ctxgate' }],
    })
    const through = result.outcomes['ctxgate'] ?? []
    expect(result.outcomes['direct']?.every((outcome) => outcome.ctxgateEstimate === undefined)).toBe(true)
    // ctxgate's estimate of what it sent, close to the fake upstream's count (before the first answer it is uncalibrated).
    for (const outcome of through) {
      expect(outcome.ctxgateEstimate).toBeGreaterThanOrEqual(outcome.promptTokens * 0.7)
      expect(outcome.ctxgateEstimate).toBeLessThanOrEqual(outcome.promptTokens * 1.6)
    }
    const start = through[Math.floor(through.length / 2)]?.ctxgateEstimate ?? 0
    const share = withinFloor(through, { startTokens: start, shortSessionRequests: 8 })
    expect(share.requestsWithin).toBe(through.findIndex((outcome) => (outcome.ctxgateEstimate ?? 0) >= start))
    expect(share.billedWithin).toBeGreaterThan(0)
  })

  it('prints JSON and Markdown, and exports ctxgate JSONL', async () => {
    const json: string[] = []
    await replay({ json: true, window: '200000' }, [subFile], (text) => json.push(text))
    const parsed = JSON.parse(json.join('')) as {
      totals: { variant: string; summary: { requests: number; refusedForLength: number } }[]
    }
    expect(parsed.totals[0]).toMatchObject({ variant: 'direct', summary: { requests: 61, refusedForLength: 0 } })
    const markdown: string[] = []
    await replay({ markdown: true }, [subFile], (text) => markdown.push(text))
    expect(markdown.join('')).toMatch(/^\| run \| variant \| requests/)
    const exported: string[] = []
    await replay({ export: '-' }, [mainFile], (text) => exported.push(text))
    expect(exported.join('')).toBe(readFileSync(mainFile, 'utf8'))
  })

  it('shows each run’s notes under the table, not only in --json', async () => {
    const notedFile = join(directory, 'noted.jsonl')
    writeFileSync(notedFile, toJsonl({ ...sub!, notes: ['system prompt and tool schemas are stand-ins'] }))
    const output: string[] = []
    await replay({}, [notedFile], (text) => output.push(text))
    expect(output.join('')).toMatch(
      /Notes on the recordings:\n\S+:\n {2}- system prompt and tool schemas are stand-ins\n/,
    )
  })

  it("assumes by default what the recording's client does with its cache, and says so", async () => {
    const fixtures = new URL('../fixtures/replay/', import.meta.url).pathname
    const claude: string[] = []
    const markdown: string[] = []
    await replay(
      { markdown: true },
      [join(fixtures, 'claude-session.jsonl')],
      (text) => claude.push(text),
      (text) => markdown.push(text),
    )
    expect(markdown.join('')).toContain('client cache: rolling for Claude Code (1 run)')
    const mini: string[] = []
    await replay({}, [join(fixtures, 'mini-v1.traj.json')], (text) => mini.push(text))
    expect(mini.join('')).toMatch(/^client cache: none for mini-swe-agent \(1 run\)/)
    const chosen: string[] = []
    await replay({ 'client-cache': 'none' }, [join(fixtures, 'claude-session.jsonl')], (text) => chosen.push(text))
    expect(chosen.join('')).toMatch(/^client cache: none \(--client-cache\)/)
  })

  it('rejects bad options with a message', async () => {
    await expect(replay({ 'client-cache': 'sometimes' }, [mainFile])).rejects.toThrow(
      /--client-cache must be none, rolling, tight, full/,
    )
    await expect(replay({ window: '-5' }, [mainFile])).rejects.toThrow(/--window must be a positive whole number/)
    await expect(replay({}, [])).rejects.toThrow(/at least one recording/)
  })
})
