import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { loadConfig } from '../../src/config/load-config.ts'
import { startTelemetry } from '../../src/telemetry/start-telemetry.ts'
import { loadTelemetrySettings } from '../../src/telemetry/telemetry-settings.ts'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { completedRecord } from '../helpers/request-record.ts'
import { eventually, startStack, type Stack } from '../helpers/stack.ts'
import { openSocket, turn } from '../helpers/sockets.ts'

/** The agent's own span, as its SDK instrumentation would send it in `traceparent`. */
const agentTraceId = '4bf92f3577b34da6a3ce929d0e0e4736'
const agentSpanId = '00f067aa0ba902b7'
const traceparent = `00-${agentTraceId}-${agentSpanId}-01`
const secretPrompt = 'the launch codes are 0451'

/** ctxgate with OTLP export to `endpoint`, flushing fast so the test sees batches quickly. */
function stackExportingTo(endpoint: string, extraEnv: Record<string, string> = {}): Promise<Stack> {
  const settings = loadTelemetrySettings({
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_METRIC_EXPORT_INTERVAL: '100',
    OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
    ...extraEnv,
  })
  if (!settings) throw new Error('telemetry settings should be on')
  return startStack({
    config: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
    telemetry: (config, logger) => startTelemetry(settings, config, logger),
  })
}

const modelSpans = (receiver: OtlpReceiver): ReceivedSpan[] =>
  receiver.spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat' || span.name.startsWith('chat'))

describe('OpenTelemetry export over OTLP/HTTP protobuf', () => {
  let receiver: OtlpReceiver
  let stack: Stack
  let client: Anthropic

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    stack = await stackExportingTo(receiver.url)
    client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test-key-0001', maxRetries: 0 })
  })
  afterAll(async () => {
    await stack.close()
    await receiver.close()
  })
  afterEach(() => {
    receiver.spans.length = 0
    stack.mock.reset()
  })

  it('sends one CLIENT span per call, joined to the client trace, with cache tokens summed into input', async () => {
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: `${secretPrompt}. You are a careful engineer. `.repeat(300) },
    ]
    const ask = () =>
      client.messages.create(
        { model: 'claude-sonnet-5', max_tokens: 16, system, messages: [{ role: 'user', content: secretPrompt }] },
        { headers: { traceparent, 'x-ctxgate-session': 'otel-session-1' } },
      )
    const first = await ask()
    const second = await ask()
    await eventually(() => expect(modelSpans(receiver)).toHaveLength(2))
    expect(receiver.contentTypes.every((type) => type === 'application/x-protobuf')).toBe(true)

    const spans = modelSpans(receiver)
    for (const [span, message] of [
      [spans[0], first],
      [spans[1], second],
    ] as const) {
      expect(span?.name).toBe('chat claude-sonnet-5')
      expect(span?.kind).toBe(3)
      expect(span?.traceId).toBe(agentTraceId)
      expect(span?.parentSpanId).toBe(agentSpanId)
      const usage = message.usage
      const expectedInput =
        usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)
      expect(span?.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-5',
        'gen_ai.conversation.id': 'otel-session-1',
        'session.id': 'otel-session-1',
        'gen_ai.request.stream': false,
        'gen_ai.usage.input_tokens': expectedInput,
        'gen_ai.usage.output_tokens': usage.output_tokens,
        'gen_ai.usage.cache_read.input_tokens': usage.cache_read_input_tokens ?? 0,
        'gen_ai.usage.cache_creation.input_tokens': usage.cache_creation_input_tokens ?? 0,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(stack.mock.url).port),
        'ctxgate.route': 'anthropic-messages',
        'ctxgate.outcome': 'complete',
        'ctxgate.upstream.attempts': 1,
      })
      expect(span?.attributes['error.type']).toBeUndefined()
      expect(span?.attributes['gen_ai.response.id']).toBe(message.id)
      expect(span?.attributes['gen_ai.response.model']).toBe(message.model)
      expect(span?.attributes['gen_ai.response.finish_reasons']).toEqual([message.stop_reason])
      expect(span?.attributes['ctxgate.rewrite.estimated_before']).toBeGreaterThan(1000)
      expect(span?.attributes['ctxgate.rewrite.breakpoints_placed']).toBeGreaterThan(0)
      expect(span?.attributes['ctxgate.session.kind']).toMatch(/^shared\//)
      expect(span?.events.map((event) => event.name)).toContain('ctxgate.upstream.first_byte')
      expect(span?.resource['service.name']).toBe('ctxgate')
    }
    // The prefix ctxgate marked was written by the first call and read by the second.
    expect(spans[0]?.attributes['gen_ai.usage.cache_creation.input_tokens']).toBeGreaterThan(1000)
    expect(spans[1]?.attributes['gen_ai.usage.cache_read.input_tokens']).toBeGreaterThan(1000)

    // One upstream attempt each: the call's span is the attempt (its status is on the first-byte event), no child.
    expect(receiver.spans.filter((span) => span.name === 'POST')).toHaveLength(0)
    const firstByte = spans[0]?.events.find((event) => event.name === 'ctxgate.upstream.first_byte')
    expect(firstByte?.attributes['http.response.status_code']).toBe(200)
    // Message content never leaves: neither the system prompt nor the user's message.
    expect(
      JSON.stringify(receiver.spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
    ).not.toContain('launch codes')
  })

  it('shows each retried attempt as its own child span', async () => {
    stack.mock.faults.push([{ kind: 'status', status: 529 }])
    await client.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'retry me' }],
    })
    await eventually(() => expect(receiver.spans.filter((span) => span.name === 'POST')).toHaveLength(2))
    const [model] = modelSpans(receiver)
    const attempts = receiver.spans.filter((span) => span.name === 'POST')
    expect(model?.attributes['ctxgate.upstream.attempts']).toBe(2)
    expect(model?.attributes['ctxgate.upstream.retries']).toBe(1)
    expect(attempts[0]?.attributes).toMatchObject({
      'http.response.status_code': 529,
      'ctxgate.upstream.retry_reason': 'status_529',
      'error.type': '529',
    })
    expect(attempts[1]?.attributes).toMatchObject({ 'http.response.status_code': 200, 'http.request.resend_count': 1 })
    expect(attempts.every((span) => span.parentSpanId === model?.spanId && span.traceId === model.traceId)).toBe(true)
  })

  it('marks an upstream error answer with error.type and an ERROR status', async () => {
    stack.mock.faults.push([{ kind: 'status', status: 400 }])
    await expect(
      client.messages.create({ model: 'claude-sonnet-5', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow()
    await eventually(() => expect(modelSpans(receiver)).toHaveLength(1))
    const [model] = modelSpans(receiver)
    expect(model?.attributes['error.type']).toBe('400')
    expect(model?.statusCode).toBe(2)
    // No traceparent sent: the span starts its own trace.
    expect(model?.parentSpanId).toBe('')
    expect(model?.traceId).not.toBe(agentTraceId)
  })

  it('sends a span for each response on a Responses WebSocket, joined to the handshake traceparent', async () => {
    const socket = await openSocket(`${stack.proxyUrl.replace('http', 'ws')}/v1/responses`, {
      authorization: 'Bearer sk-openai-test-key-0003',
      'openai-beta': 'responses_websockets=2026-02-06',
      traceparent,
    })
    const events = await turn(socket, {
      type: 'response.create',
      model: 'gpt-5',
      store: false,
      input: [{ type: 'message', role: 'user', content: secretPrompt }],
    })
    socket.close()
    const completed = events.at(-1) as { response: { usage: { input_tokens: number; output_tokens: number } } }
    await eventually(() => expect(modelSpans(receiver)).toHaveLength(1))
    const [span] = modelSpans(receiver)
    expect(span?.name).toBe('chat gpt-5')
    expect(span?.kind).toBe(3)
    expect(span?.traceId).toBe(agentTraceId)
    expect(span?.parentSpanId).toBe(agentSpanId)
    expect(span?.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': completed.response.usage.input_tokens,
      'gen_ai.usage.output_tokens': completed.response.usage.output_tokens,
      'ctxgate.route': 'openai-responses-ws',
    })
    expect(span?.attributes['ctxgate.upstream.attempts']).toBe(1)
  })

  it('exports the GenAI metrics with the same token numbers and the specification buckets', async () => {
    const tokenPoint = (type: string) =>
      receiver.histograms
        .filter(
          (point) =>
            point.metric === 'gen_ai.client.token.usage' &&
            point.attributes['gen_ai.token.type'] === type &&
            point.attributes['gen_ai.provider.name'] === 'anthropic',
        )
        .at(-1)
    const promSum = async (type: string): Promise<number> => {
      const text = await (await request(`${stack.proxyUrl}/metrics`)).body.text()
      const line = text
        .split('\n')
        .find(
          (candidate) =>
            candidate.startsWith('gen_ai_client_token_usage_sum{') &&
            candidate.includes('gen_ai_provider_name="anthropic"') &&
            candidate.includes(`gen_ai_token_type="${type}"`),
        )
      return line === undefined ? 0 : Number(line.split(' ').at(-1))
    }
    // Earlier tests' calls exported first, so the difference below is this call's alone.
    const promBefore = await promSum('input')
    await eventually(() => expect(tokenPoint('input')?.sum ?? 0).toBe(promBefore))
    const before = tokenPoint('input')?.sum ?? 0
    const message = await client.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'count my tokens' }],
    })
    const expectedInput =
      message.usage.input_tokens +
      (message.usage.cache_read_input_tokens ?? 0) +
      (message.usage.cache_creation_input_tokens ?? 0)
    const promInput = await promSum('input')
    const promOutput = await promSum('output')
    // Points are cumulative: the latest one holds every call so far, as the Prometheus sum does.
    await eventually(() => expect(tokenPoint('input')?.sum).toBe(promInput))
    await eventually(() => expect(tokenPoint('output')?.sum).toBe(promOutput))
    const input = tokenPoint('input')
    expect((input?.sum ?? 0) - before).toBe(expectedInput)
    expect(input?.unit).toBe('{token}')
    expect(input?.bounds.at(-1)).toBe(67_108_864)
    expect(input?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'claude-sonnet-5',
    })
    expect(await (await request(`${stack.proxyUrl}/metrics`)).body.text()).toContain(
      'gen_ai_client_token_usage_bucket{le="67108864"',
    )
    const duration = receiver.histograms.filter((point) => point.metric === 'gen_ai.client.operation.duration').at(-1)
    expect(duration?.unit).toBe('s')
    expect(duration?.count).toBeGreaterThan(0)
    expect(duration?.bounds.at(-1)).toBe(81.92)
  })
})

describe('OpenTelemetry export over OTLP/HTTP JSON with OpenInference attributes', () => {
  let receiver: OtlpReceiver
  let stack: Stack

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    stack = await stackExportingTo(receiver.url, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      CTXGATE_OTEL_FORMAT: 'both',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental',
      OTEL_SERVICE_NAME: 'agent-gateway',
    })
  })
  afterAll(async () => {
    await stack.close()
    await receiver.close()
  })

  it('streams a chat completion and sends GenAI and OpenInference attributes, first chunk metric included', async () => {
    const client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-test-openai-0001', maxRetries: 0 })
    const stream = await client.chat.completions.create(
      {
        model: 'gpt-5.5',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: secretPrompt }],
      },
      { headers: { traceparent } },
    )
    let usage: OpenAI.CompletionUsage | undefined
    let id = ''
    const finishReasons: string[] = []
    for await (const chunk of stream) {
      usage = chunk.usage ?? usage
      id = chunk.id
      for (const choice of chunk.choices) if (choice.finish_reason) finishReasons.push(choice.finish_reason)
    }
    await eventually(() => expect(modelSpans(receiver)).toHaveLength(1))
    expect(receiver.contentTypes.some((type) => type.startsWith('application/json'))).toBe(true)
    const [span] = modelSpans(receiver)
    expect(span?.name).toBe('chat gpt-5.5')
    expect(span?.traceId).toBe(agentTraceId)
    expect(span?.parentSpanId).toBe(agentSpanId)
    expect(span?.resource['service.name']).toBe('agent-gateway')
    expect(span?.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': usage?.prompt_tokens,
      'gen_ai.usage.output_tokens': usage?.completion_tokens,
      'openinference.span.kind': 'LLM',
      'llm.system': 'openai',
      'llm.model_name': 'gpt-5.5',
      'llm.token_count.prompt': usage?.prompt_tokens,
      'llm.token_count.completion': usage?.completion_tokens,
      'llm.token_count.total': usage?.total_tokens,
      'llm.token_count.prompt_details.cache_read': usage?.prompt_tokens_details?.cached_tokens ?? 0,
    })
    expect(span?.attributes['gen_ai.response.id']).toBe(id)
    expect(span?.attributes['gen_ai.response.finish_reasons']).toEqual(finishReasons)
    expect(finishReasons.length).toBeGreaterThan(0)
    // gen_ai_latest_experimental: the v1.36 name is left out.
    expect(span?.attributes['gen_ai.system']).toBeUndefined()
    await eventually(() =>
      expect(receiver.histograms.some((point) => point.metric === 'gen_ai.client.operation.time_to_first_chunk')).toBe(
        true,
      ),
    )
    expect(
      JSON.stringify(receiver.spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
    ).not.toContain('launch codes')
  })
})

describe('a collector that is down or slow', () => {
  it('changes nothing for the client', async () => {
    // A port that was listening and is now closed: every export is refused.
    const gone = await startOtlpReceiver()
    const deadUrl = gone.url
    await gone.close()
    const slow = await startOtlpReceiver()
    slow.delayMs = 2_000
    const baseline = await startStack()
    // A short export timeout keeps the test's own shutdown quick; requests never wait on it either way.
    const dead = await stackExportingTo(deadUrl, { OTEL_EXPORTER_OTLP_TIMEOUT: '300' })
    const slowed = await stackExportingTo(slow.url, { OTEL_EXPORTER_OTLP_TIMEOUT: '300' })
    try {
      const answers = async (stack: Stack): Promise<unknown[]> => {
        const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test-key-0001', maxRetries: 0 })
        return Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            client.messages
              .create({
                model: 'claude-sonnet-5',
                max_tokens: 16,
                messages: [{ role: 'user', content: `call ${index}` }],
              })
              .then((message) => ({ content: message.content, usage: message.usage, stop: message.stop_reason })),
          ),
        )
      }
      const expected = await answers(baseline)
      expect(await answers(dead)).toEqual(expected)
      expect(await answers(slowed)).toEqual(expected)
      expect(dead.logLines.some((line) => line.includes('"status":200'))).toBe(true)
    } finally {
      await Promise.all([baseline.close(), dead.close(), slowed.close()])
      await slow.close()
    }
  })
})

describe('the hand-off to the export worker', () => {
  it('drops calls past the queue bound instead of holding them, and says so once', async () => {
    const settings = loadTelemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_BSP_MAX_QUEUE_SIZE: '8',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
    })
    if (!settings) throw new Error('telemetry settings should be on')
    const lines: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) })
    const telemetry = startTelemetry(settings, loadConfig({ env: {} }), logger)
    const record = completedRecord({ durationMs: 5 })
    // One synchronous burst: the worker cannot take any of it before the loop ends.
    for (let call = 0; call < 100; call++) telemetry.recordModelCall(record, 'claude-sonnet-5')
    expect(telemetry.pendingCalls).toBe(8)
    expect(telemetry.droppedCalls).toBe(92)
    expect(lines.filter((line) => line.includes('export is behind'))).toHaveLength(1)
    await eventually(() => expect(telemetry.pendingCalls).toBe(0))
    await telemetry.shutdown()
  })
})
