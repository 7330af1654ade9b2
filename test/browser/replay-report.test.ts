import { mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zeroUsage } from '../../src/model-call/usage.ts'
import { renderHtml } from '../../src/replay/report/html.ts'
import { rowsFor } from '../../src/replay/report/rows.ts'
import type { RequestOutcome } from '../../src/replay/request-outcome.ts'
import type { RunResult } from '../../src/replay/run-replay.ts'
import { summarize } from '../../src/replay/summarize.ts'
import { launchChromium } from '../helpers/browser.ts'

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(() => browser?.close())

/** A run that grows by 3,000 tokens a request; direct is refused past the window, ctxgate is not. */
function outcomes(count: number, window: number, edited: boolean): RequestOutcome[] {
  return Array.from({ length: count }, (_, index) => {
    const size = 2_000 + index * 3_000
    const sent = edited ? Math.min(size, window * 0.6) : size
    if (sent > window)
      return { index, status: 400, refusedForLength: true, promptTokens: sent, usage: zeroUsage, error: 'too long' }
    const usage = { ...zeroUsage, cacheReadTokens: sent - 3_200, cacheWrite5mTokens: 3_000, inputTokens: 200 }
    return { index, status: 200, refusedForLength: false, promptTokens: sent, usage }
  })
}

describe('replay --html report', () => {
  it('draws every variant with the shared chart: one bar per request, the window, the legend and the footnote', async () => {
    const window = 40_000
    const direct = outcomes(20, window, false)
    const ctxgate = outcomes(20, window, true)
    const result: RunResult = {
      id: 'run',
      source: '/recordings/agent-run.jsonl',
      notes: [],
      outcomes: { direct, ctxgate },
      summaries: { direct: summarize(direct), ctxgate: summarize(ctxgate, direct) },
    }
    const html = renderHtml([result], rowsFor('all runs', result.summaries), 'replay report test', window)
    mkdirSync('test-results', { recursive: true })
    const file = resolve('test-results/replay-report.html')
    writeFileSync(file, html)

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const fetched: string[] = []
    page.on('request', (sent) => fetched.push(sent.url()))
    await page.goto(pathToFileURL(file).href)
    const charts = page.locator('[data-chart]')
    expect(await charts.count()).toBe(2)
    for (const index of [0, 1]) {
      const chart = charts.nth(index)
      await expect.poll(() => chart.getAttribute('data-drawn-bars')).toBe('20')
      expect(await chart.locator('.u-legend').textContent()).toMatch(/cache read.*refused for length.*window/s)
    }
    expect(fetched.every((url) => url.startsWith('file:'))).toBe(true)
    const text = await page.locator('main').textContent()
    expect(text).toContain('billed-equivalent input tokens')
    expect(text).toContain('÷ direct')
    expect(text).toMatch(/refuses for length bills nothing, while ctxgate serves every request/)
    await page.screenshot({ path: 'test-results/replay-report.png', fullPage: true })
    await page.close()
  })
})
