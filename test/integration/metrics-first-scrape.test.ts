import OpenAI from 'openai'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { registerProcessMetrics } from '../../src/metrics/process-metrics.ts'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'
import { ModelLabels } from '../../src/metrics/model-labels.ts'
import { withoutOpenAIDate } from '../../src/providers/openai/model-family.ts'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack

beforeAll(async () => {
  // The shipped model list (not a test catch-all), so known and unknown models both occur.
  stack = await startStack({ config: { models: loadConfig().models } as never })
})
afterAll(() => stack.close())

const metricsText = async (): Promise<string> => (await request(`${stack.proxyUrl}/metrics`)).body.text()

describe('metrics from the first scrape', () => {
  it('has a zero series for every bounded label set before any request', async () => {
    const fresh = new Registry()
    createProxyMetrics(fresh)
    const text = await fresh.metrics()
    expect(text).toMatch(
      /^ctxgate_requests_total\{route="openai-chat",provider="openai",model="",status_class="5xx"\} 0$/m,
    )
    expect(text).toMatch(
      /^ctxgate_requests_total\{route="passthrough",provider="anthropic",model="",status_class="2xx"\} 0$/m,
    )
    expect(text).toMatch(/^ctxgate_upstream_retries_total\{provider="openai",reason="status_529"\} 0$/m)
    expect(text).toMatch(/^ctxgate_stream_aborts_total\{provider="anthropic",phase="upstream_mid_stream"\} 0$/m)
    expect(text).toMatch(/^ctxgate_cache_prefix_breaks_total\{provider="openai",cause="ctxgate_batch"\} 0$/m)
    expect(text).toMatch(/^ctxgate_edits_total\{provider="anthropic",edit="clear"\} 0$/m)
    expect(text).toMatch(/^ctxgate_store_errors_total\{operation="connection"\} 0$/m)
    // No pairing that cannot happen (an Anthropic route served by OpenAI).
    expect(text).not.toMatch(/route="anthropic-messages",provider="openai"/)
  })

  it('adds process, Node.js and build metrics to a served registry', async () => {
    const registry = new Registry()
    registerProcessMetrics(registry, '9.9.9')
    const text = await registry.metrics()
    expect(text).toMatch(/^process_resident_memory_bytes \d/m)
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m)
    expect(text).toContain(`ctxgate_build_info{version="9.9.9",node_version="${process.versions.node}"} 1`)
  })
})

describe('model labels', () => {
  it("fold OpenAI's dated snapshots into their family as Claude's are", () => {
    const labels = new ModelLabels()
    expect(labels.of('gpt-4o-2024-08-06')).toBe('gpt-4o')
    expect(labels.of('gpt-4.1-mini-2025-04-14')).toBe('gpt-4.1-mini')
    expect(labels.of('o3-2025-04-16')).toBe('o3')
    expect(labels.of('gpt-3.5-turbo-0125')).toBe('gpt-3.5-turbo')
    expect(labels.of('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5')
    expect(withoutOpenAIDate('gpt-4-1106-preview')).toBe('gpt-4-1106-preview')
    expect(withoutOpenAIDate('gpt-5')).toBe('gpt-5')
  })
})

describe('models the configuration does not know', () => {
  it('are counted on every request and warned about once per model', async () => {
    const openai = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-unknown-model', maxRetries: 0 })
    const ask = (model: string) =>
      openai.chat.completions.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
    await ask('llama-4-maverick')
    await ask('llama-4-maverick')
    await ask('gpt-4o-2024-08-06')
    const text = await metricsText()
    expect(text).toMatch(/^ctxgate_unknown_model_requests_total\{model="llama-4-maverick"\} 2$/m)
    expect(text).not.toMatch(/ctxgate_unknown_model_requests_total\{model="gpt-4o/)
    const warnings = stack.logLines.filter((line) => line.includes('matches no models: entry'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('"model":"llama-4-maverick"')
    expect(warnings[0]).not.toContain('sk-unknown-model')
  })
})
