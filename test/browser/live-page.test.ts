import { mkdirSync } from 'node:fs'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { Browser, Page } from 'playwright-core'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentSession } from '../helpers/agent-traffic.ts'
import { launchChromium } from '../helpers/browser.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const adminToken = 'admin-token-for-the-live-page-0001'
const anthropicKey = 'sk-ant-live-page-secret-key-0001'
const openaiKey = 'sk-openai-live-page-secret-key-0002'
const marker = 'BODY-MARKER-7f3a9c'
const sessionHeader = 'session-header-value-42'
const window = 60_000

let stack: Stack
let browser: Browser

beforeAll(async () => {
  stack = await startStack({
    config: {
      metrics: { token: adminToken },
      log: { level: 'silent' },
      models: [{ match: '*', window, budget: 0.4, minCacheableTokens: 1024, thinkingBoundToPrefix: false }],
    },
    mock: { window },
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await stack?.close()
})

/** A signed-in page: the token link is traded for the cookie and the page opens its event stream. */
async function openLivePage(): Promise<{ page: Page; streamsOpened: () => number }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
  const page = await context.newPage()
  let streams = 0
  page.on('request', (sent) => {
    if (new URL(sent.url()).pathname === '/ctxgate/events') streams++
  })
  await page.goto(`${stack.proxyUrl}/ctxgate/?token=${adminToken}`)
  expect(new URL(page.url()).search).toBe('')
  await page.locator(live).waitFor()
  return { page, streamsOpened: () => streams }
}

/** Conditions are selectors, waited on by playwright outside the page (its CSP forbids evaluated strings). */
const live = '#status.live'

const drawnBars = (page: Page): Promise<string | undefined> =>
  page
    .locator('#chart')
    .getAttribute('data-drawn-bars')
    .then((value) => value ?? undefined)

describe('live page', () => {
  it('refuses without the admin token, and signs in with it', async () => {
    const page = await request(`${stack.proxyUrl}/ctxgate/`)
    expect(page.statusCode).toBe(401)
    const login = await page.body.text()
    expect(login).toContain('name="token"')
    expect(login).not.toContain('id="sessions"')
    for (const headers of [
      {},
      { authorization: 'Bearer not-the-admin-token-000' },
      { cookie: 'ctxgate_live=forged' },
    ]) {
      const events = await request(`${stack.proxyUrl}/ctxgate/events`, { headers })
      expect(events.statusCode).toBe(401)
      await events.body.dump()
    }
    const wrongLink = await request(`${stack.proxyUrl}/ctxgate/?token=not-the-admin-token-000`)
    expect(wrongLink.statusCode).toBe(401)
    expect(wrongLink.headers['set-cookie']).toBeUndefined()
    await wrongLink.body.dump()

    const context = await browser.newContext()
    const tab = await context.newPage()
    await tab.goto(`${stack.proxyUrl}/ctxgate/`)
    expect(await tab.locator('#sessions').count()).toBe(0)
    await tab.fill('input[name="token"]', adminToken)
    await tab.click('button[type="submit"]')
    await tab.locator(live).waitFor()
    const cookie = (await context.cookies()).find((entry) => entry.name === 'ctxgate_live')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/ctxgate' })
    expect(cookie?.value).not.toContain(adminToken)
    await context.close()
  })

  it('shows SDK traffic as it happens: one bar per request, batches, avoided refusals', async () => {
    const { page, streamsOpened } = await openLivePage()
    const anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: anthropicKey, maxRetries: 0 })
    const steps = 30
    await runAgentSession({
      client: anthropic,
      model: 'claude-sonnet-4-5',
      steps,
      outputChars: 10_000,
      marker,
      headers: { 'x-ctxgate-session': sessionHeader },
      // Each answer reaches the open page over its event stream, before the next request is sent.
      afterEach: (sent) => page.locator(`#chart[data-drawn-bars="${sent}"]`).waitFor(),
    })
    expect(await drawnBars(page)).toBe(String(steps))
    expect(await page.locator('#log tbody tr').count()).toBe(steps)
    expect(stack.mock.requests.length).toBe(steps)

    const openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: openaiKey, maxRetries: 0 })
    await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: `Hi ${marker}` }] })
    await page.locator('#sessions tbody tr').nth(1).waitFor()

    const anthropicRow = page.locator('#sessions tbody tr', { hasText: 'claude-sonnet-4-5' })
    const cells = await anthropicRow.locator('td').allTextContents()
    expect(cells[0]).toBe('Anthropic SDK (JS)')
    expect(cells[3]).toBe(String(steps))
    expect(Number(cells[10])).toBeGreaterThan(0) // edit batches
    expect(Number(cells[11])).toBeGreaterThan(0) // refusals avoided: past 60k unedited
    expect(cells[12]).toBe('1') // compactions avoided: crossed window − 33k once
    expect(await page.locator('#totals .card').count()).toBeGreaterThan(5)
    // One stream for the whole run: updates were pushed, not polled or reloaded.
    expect(streamsOpened()).toBe(1)

    mkdirSync('test-results', { recursive: true })
    await anthropicRow.click()
    await page.screenshot({ path: 'test-results/live-page.png', fullPage: true })
    await page.context().close()
  })

  it('labels each batch with its own counts and reason, with no label over another or the y-axis', async () => {
    const { page } = await openLivePage()
    await page.locator('#sessions tbody tr', { hasText: 'claude-sonnet-4-5' }).click()
    await page.locator('#chart[data-labels]').waitFor()
    const labels = JSON.parse((await page.locator('#chart').getAttribute('data-labels')) ?? '[]') as Label[]
    const plotLeft = Number(await page.locator('#chart').getAttribute('data-plot-left'))
    const events = (await snapshotSessions()).find((view) => view.summary.model === 'claude-sonnet-4-5')?.requests ?? []
    const batches = events.filter((event) => event.newBatch)
    expect(batches.length).toBeGreaterThan(1)
    expect(labels.length).toBeGreaterThan(1)
    for (const label of labels) {
      // Each label is one batch's own: its reason and its own counts, never the running total.
      const batch = batches.find((event) => label.text === `✂ ${event.batchReason}`)
      expect(batch, label.text).toBeDefined()
      const cleared = /cleared (\d+)/.exec(label.text)?.[1]
      if (cleared !== undefined) expect(Number(cleared)).toBe(batch?.batchCleared)
      expect(label.left).toBeGreaterThanOrEqual(plotLeft)
    }
    // Later batches count fewer than the session's total so far: the labels are not cumulative.
    expect(batches.some((event) => (event.batchCleared ?? 0) < event.cleared)).toBe(true)
    await page.locator('#chart').screenshot({ path: 'test-results/live-page-chart.png' })
    for (const [index, a] of labels.entries())
      for (const b of labels.slice(index + 1))
        expect(
          a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top,
          `${a.text} / ${b.text}`,
        ).toBe(true)
    await page.context().close()
  })

  it('fits the sessions table at 1400 px, and scrolls it inside its box at 900 px', async () => {
    for (const width of [1400, 900]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } })
      const page = await context.newPage()
      await page.goto(`${stack.proxyUrl}/ctxgate/?token=${adminToken}`)
      await page.locator('#sessions tbody tr').nth(1).waitFor()
      const table = await page.locator('#sessions').boundingBox()
      const wrap = await page.locator('#sessions').locator('xpath=..').boundingBox()
      expect(wrap && wrap.x + wrap.width).toBeLessThanOrEqual(width)
      if (width === 1400) expect(table && table.x + table.width).toBeLessThanOrEqual(width - 24)
      await page.screenshot({ path: `test-results/live-page-${width}.png`, fullPage: true })
      await context.close()
    }
  })

  it('formats a saving just below zero as "-0.03%", never "-0.0%" (the page’s one percentage formatter)', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${stack.proxyUrl}/ctxgate/?token=${adminToken}`)
    // A session with no edit billed 173,018.85 tokens against its client's own 172,963.25 (a real run).
    const shown = await page.evaluate(() => {
      // `window` is this file's window size; the page's global is reached as globalThis.
      const { percent } = (globalThis as unknown as { ctxgateFormat: { percent(part: number, whole: number): string } })
        .ctxgateFormat
      return [
        percent(172_963.25 - 173_018.85, 172_963.25),
        percent(-1e-9, 1),
        percent(0, 5),
        percent(1, 8),
        percent(1, 0),
      ]
    })
    expect(shown).toEqual(['-0.03%', '0.0%', '0.0%', '12.5%', '—'])
    await context.close()
  })

  it('shows no request body, key or header value in the page or its event stream', async () => {
    const { page } = await openLivePage()
    await page.locator('#sessions tbody tr').nth(1).waitFor()
    const html = await page.content()
    const stream = await firstFrames(`${stack.proxyUrl}/ctxgate/events`)
    expect(stream).toContain('event: snapshot')
    expect(stream).toContain('claude-sonnet-4-5')
    for (const text of [html, stream]) {
      for (const secret of [
        marker,
        anthropicKey,
        openaiKey,
        sessionHeader,
        'cat build-',
        'careful coding agent',
        'Anthropic/JS 1.',
      ])
        expect(text).not.toContain(secret)
    }
    await page.context().close()
  })
})

interface Label {
  readonly text: string
  readonly left: number
  readonly right: number
  readonly top: number
  readonly bottom: number
}

interface SnapshotEvent {
  readonly newBatch: boolean
  readonly batchReason?: string
  readonly batchCleared?: number
  readonly cleared: number
}

async function snapshotSessions(): Promise<{ summary: { model: string }; requests: SnapshotEvent[] }[]> {
  const stream = await firstFrames(`${stack.proxyUrl}/ctxgate/events`)
  const data = /event: snapshot\ndata: (.*)\n\n/.exec(stream)?.[1] ?? '{"sessions":[]}'
  return (JSON.parse(data) as { sessions: { summary: { model: string }; requests: SnapshotEvent[] }[] }).sessions
}

/** Reads the event stream until the snapshot has arrived, then closes it. */
async function firstFrames(url: string): Promise<string> {
  const response = await request(url, { headers: { authorization: `Bearer ${adminToken}` } })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toMatch(/^text\/event-stream/)
  let text = ''
  for await (const chunk of response.body) {
    text += (chunk as Buffer).toString('utf8')
    if (/event: snapshot\ndata: .*\n\n/.test(text)) break
  }
  response.body.destroy()
  return text
}
