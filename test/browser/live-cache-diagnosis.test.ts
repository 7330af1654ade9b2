import Anthropic from '@anthropic-ai/sdk'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../helpers/browser.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

const adminToken = 'admin-token-for-the-diagnosis-page-01'
const task = `Task: ${'find why the build fails and fix it. '.repeat(200)}`

let stack: Stack
let browser: Browser

beforeAll(async () => {
  stack = await startStack({ config: { metrics: { token: adminToken }, log: { level: 'silent' } } })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await stack?.close()
})

describe('live page', () => {
  it("shows the provider's reason for a cache miss beside ctxgate's own, in the session's request log", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${stack.proxyUrl}/ctxgate/?token=${adminToken}`)
    await page.locator('#status.live').waitFor()
    const client = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-diagnosis-page',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'diagnosed' },
    })
    const ask = (answer: string, previous: string | null) =>
      client.beta.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        betas: ['cache-diagnosis-2026-04-07'],
        diagnostics: { previous_message_id: previous },
        messages: [
          { role: 'user', content: task },
          { role: 'assistant', content: answer },
          { role: 'user', content: 'Go on.' },
        ],
      })
    const first = await ask('I will start with the logs.', null)
    // The client rewrites an earlier answer of its own: both ctxgate and the provider see the change.
    const second = await ask('I will start with the tests.', first.id)
    expect(second.diagnostics?.cache_miss_reason?.type).toBe('messages_changed')
    await page.locator('#sessions tbody tr').first().click()
    const row = page.locator('#log tbody tr', { hasText: 'provider says messages changed' })
    await row.waitFor()
    expect(await row.textContent()).toContain('client changed its history')
    expect(await page.locator('#log tbody tr', { hasText: 'provider says' }).count()).toBe(1)
    await context.close()
  })
})
