import { readFileSync } from 'node:fs'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'
import { ModelLabels, maxModelLabels } from '../../src/metrics/model-labels.ts'
import { recordRequest } from '../../src/metrics/record-request.ts'
import { SessionAccounting } from '../../src/session/accounting.ts'
import { startStack, type Stack } from '../helpers/stack.ts'
import { completedRecord } from '../helpers/request-record.ts'

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack.close())

/** Sum of a counter's samples (optionally filtered by labels), read from the live /metrics text. */
async function scrape(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)))
      total += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return total
}

interface Seen {
  input: number
  cacheRead: number
  cacheWrite: number
  output: number
}

describe('token metrics equal what the upstream reported', () => {
  it('counts Anthropic and OpenAI usage, streamed and not, with cache writes and reads, exactly', async () => {
    const before = {
      input: await scrape('ctxgate_tokens_total', { kind: 'input' }),
      read: await scrape('ctxgate_tokens_total', { kind: 'cache_read' }),
      write: await scrape('ctxgate_tokens_total', { kind: 'cache_write_5m' }),
      output: await scrape('ctxgate_tokens_total', { kind: 'output' }),
    }
    const seen: Seen = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
    const anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-metrics', maxRetries: 0 })
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: 'House rules. '.repeat(900), cache_control: { type: 'ephemeral' } },
    ]
    for (let index = 0; index < 2; index++) {
      const message = await anthropic.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        system,
        messages: [{ role: 'user', content: 'Say hello.' }],
      })
      add(seen, message.usage)
      const streamed = await anthropic.messages
        .stream({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          system,
          messages: [{ role: 'user', content: 'Say hello.' }],
        })
        .finalMessage()
      add(seen, streamed.usage)
    }
    expect(seen.cacheWrite).toBeGreaterThan(0)
    expect(seen.cacheRead).toBeGreaterThan(0)

    const openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-metrics', maxRetries: 0 })
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Follow the style guide. '.repeat(400) },
      { role: 'user', content: 'Hi' },
    ]
    for (let index = 0; index < 2; index++) {
      const completion = await openai.chat.completions.create({ model: 'gpt-5', messages })
      addOpenAI(seen, completion.usage)
      const stream = await openai.chat.completions.create({
        model: 'gpt-5',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      })
      for await (const chunk of stream) if (chunk.usage) addOpenAI(seen, chunk.usage)
    }

    expect((await scrape('ctxgate_tokens_total', { kind: 'input' })) - before.input).toBe(seen.input)
    expect((await scrape('ctxgate_tokens_total', { kind: 'cache_read' })) - before.read).toBe(seen.cacheRead)
    expect((await scrape('ctxgate_tokens_total', { kind: 'cache_write_5m' })) - before.write).toBe(seen.cacheWrite)
    expect((await scrape('ctxgate_tokens_total', { kind: 'output' })) - before.output).toBe(seen.output)
    expect(await scrape('gen_ai_client_token_usage_count', { gen_ai_token_type: 'input' })).toBeGreaterThanOrEqual(8)
  })

  it('counts what arrived of a stream cut mid-way', async () => {
    const before = await scrape('ctxgate_tokens_total', { kind: 'input', model: 'claude-cut-1' })
    const anthropic = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-metrics', maxRetries: 0 })
    const stream = anthropic.messages.stream(
      { model: 'claude-cut-1', max_tokens: 64, messages: [{ role: 'user', content: 'Cut me off.' }] },
      { headers: { 'x-mock-fault': '{"kind":"reset-mid-stream","afterFrames":2}' } },
    )
    let started: Anthropic.Usage | undefined
    await (async () => {
      for await (const event of stream) if (event.type === 'message_start') started = event.message.usage
    })().catch(() => undefined)
    expect(started?.input_tokens).toBeGreaterThan(0)
    expect((await scrape('ctxgate_tokens_total', { kind: 'input', model: 'claude-cut-1' })) - before).toBe(
      started?.input_tokens,
    )
    expect(await scrape('ctxgate_stream_aborts_total', { phase: 'upstream_mid_stream' })).toBeGreaterThanOrEqual(1)
  })

  it('asks OpenAI streams for usage the client did not request, counts it, and hides it from the client', async () => {
    const openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-metrics', maxRetries: 0 })
    const before = await scrape('ctxgate_tokens_total', { kind: 'output', model: 'gpt-hidden' })
    const raw = await request(`${stack.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-hidden', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    })
    const text = await raw.body.text()
    expect(JSON.parse(stack.mock.requests.at(-1)?.body ?? '{}')).toMatchObject({
      stream_options: { include_usage: true },
    })
    expect(text).not.toContain('usage')
    expect(text).not.toContain('"choices":[]')
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    expect((await scrape('ctxgate_tokens_total', { kind: 'output', model: 'gpt-hidden' })) - before).toBeGreaterThan(0)
    // The SDK reads the same stream without trouble.
    const stream = await openai.chat.completions.create({
      model: 'gpt-hidden',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    })
    let content = ''
    for await (const chunk of stream) {
      expect(chunk.choices.length).toBe(1)
      content += chunk.choices[0]?.delta.content ?? ''
    }
    expect(content).toContain('mock upstream')
  })
})

describe('sessions and label bounds', () => {
  it('reports per-session totals on /ctxgate/sessions', async () => {
    const anthropic = new Anthropic({
      baseURL: stack.proxyUrl,
      apiKey: 'sk-ant-metrics',
      maxRetries: 0,
      defaultHeaders: { 'x-ctxgate-session': 'harness-42' },
    })
    for (let index = 0; index < 3; index++)
      await anthropic.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 16,
        messages: [{ role: 'user', content: `turn ${index}` }],
      })
    const one = (await (await request(`${stack.proxyUrl}/ctxgate/sessions/harness-42`)).body.json()) as Record<
      string,
      unknown
    >
    expect(one).toMatchObject({
      sessionId: 'harness-42',
      turns: 3,
      promptTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      models: ['claude-sonnet-4-5'],
    })
    expect(Number(one['promptTokens'])).toBeGreaterThan(0)
    const all = (await (await request(`${stack.proxyUrl}/ctxgate/sessions`)).body.json()) as {
      sessions: { sessionId: string }[]
    }
    expect(all.sessions[0]?.sessionId).toBe('harness-42')
    expect((await request(`${stack.proxyUrl}/ctxgate/sessions/nope`)).statusCode).toBe(404)
  })

  it('keeps the model label bounded under 10,000 distinct model strings', async () => {
    const registry = new Registry()
    const deps = {
      metrics: createProxyMetrics(registry),
      models: new ModelLabels(),
      sessions: new SessionAccounting(100),
    }
    for (let index = 0; index < 10_000; index++) {
      recordRequest(
        deps,
        completedRecord({
          durationMs: 1,
          usage: { inputTokens: 1, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 1 },
          accounting: { model: `model-${index}-\u00e9"x`, refusalAvoided: false },
        }),
      )
    }
    const values = (await registry.getSingleMetric('ctxgate_tokens_total')?.get())?.values ?? []
    const models = new Set(values.map((value) => value.labels['model']))
    expect(models.size).toBeLessThanOrEqual(maxModelLabels + 1)
    expect(models.has('other')).toBe(true)
    expect([...models].every((model) => /^[a-z0-9._:/-]+$/.test(String(model)))).toBe(true)
  })
})

describe('the Grafana dashboard', () => {
  it('is valid JSON and every query names a metric ctxgate exports', async () => {
    const dashboard = JSON.parse(
      readFileSync(new URL('../../deploy/grafana/ctxgate-dashboard.json', import.meta.url), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[] }
    const registry = new Registry()
    createProxyMetrics(registry)
    const exported = new Set(registry.getMetricsAsArray().map((metric) => metric.name))
    const queries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr))
    expect(queries.length).toBeGreaterThan(10)
    for (const expr of queries) {
      // Label names in by (...) clauses and selectors are not metrics.
      const names =
        expr
          .replace(/by \([^)]*\)/g, '')
          .replace(/\{[^}]*\}/g, '')
          .match(/\b(ctxgate_[a-z0-9_]+|gen_ai_[a-z0-9_]+)/g) ?? []
      expect(names.length, expr).toBeGreaterThan(0)
      for (const name of names)
        expect(exported.has(name.replace(/_(bucket|sum|count)$/, '')), `${name} in ${expr}`).toBe(true)
    }
  })
})

function add(seen: Seen, usage: Anthropic.Usage): void {
  seen.input += usage.input_tokens
  seen.cacheRead += usage.cache_read_input_tokens ?? 0
  seen.cacheWrite += usage.cache_creation_input_tokens ?? 0
  seen.output += usage.output_tokens
}

function addOpenAI(seen: Seen, usage: OpenAI.CompletionUsage | undefined | null): void {
  if (!usage) return
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0
  seen.input += usage.prompt_tokens - cached
  seen.cacheRead += cached
  seen.output += usage.completion_tokens
}
