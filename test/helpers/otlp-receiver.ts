import { createRequire } from 'node:module'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The OTLP protobuf schema (opentelemetry-proto), as compiled by @opentelemetry/otlp-transformer 0.57 with protobufjs. */
interface ProtoMessage {
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>
}
const schema = createRequire(import.meta.url)('otlp-proto-schema/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoMessage } }
        metrics: { v1: { ExportMetricsServiceRequest: ProtoMessage } }
      }
    }
  }
}
const traceRequest = schema.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest
const metricsRequest = schema.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest

export type AttributeValue = string | number | boolean | readonly string[] | undefined

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  /** OTLP's SpanKind: 3 is CLIENT. */
  readonly kind: number
  readonly startNs: bigint
  readonly endNs: bigint
  readonly attributes: Readonly<Record<string, AttributeValue>>
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }[]
  /** OTLP's StatusCode: 2 is ERROR. */
  readonly statusCode: number
  readonly resource: Readonly<Record<string, AttributeValue>>
}

export interface ReceivedHistogramPoint {
  readonly metric: string
  readonly unit: string
  readonly attributes: Readonly<Record<string, AttributeValue>>
  readonly count: number
  readonly sum: number
  readonly bounds: readonly number[]
}

export interface OtlpReceiver {
  /** Base URL, the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string
  readonly spans: ReceivedSpan[]
  readonly histograms: ReceivedHistogramPoint[]
  /** Content types of every export received, in order. */
  readonly contentTypes: string[]
  /** Holds each answer this long (a slow collector). */
  delayMs: number
  close(): Promise<void>
}

/** An OTLP/HTTP collector on a loopback port: decodes protobuf with the official schema, and OTLP/JSON. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const state = { delayMs: 0 }
  const spans: ReceivedSpan[] = []
  const histograms: ReceivedHistogramPoint[] = []
  const contentTypes: string[] = []
  const server: Server = createServer((request, response) => {
    void receive(request, response).catch(() => response.destroy())
  })
  const receive = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const contentType = request.headers['content-type'] ?? ''
    contentTypes.push(contentType)
    const json = contentType.startsWith('application/json')
    if (request.url === '/v1/traces')
      spans.push(...spansOf(json ? jsonBody(body) : protoBody(traceRequest, body), json))
    else if (request.url === '/v1/metrics')
      histograms.push(...histogramsOf(json ? jsonBody(body) : protoBody(metricsRequest, body)))
    if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs))
    if (response.destroyed) return
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
    response.end(json ? '{}' : Buffer.alloc(0))
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    histograms,
    contentTypes,
    get delayMs() {
      return state.delayMs
    },
    set delayMs(value: number) {
      state.delayMs = value
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

type Tree = Record<string, unknown>

function protoBody(message: ProtoMessage, body: Buffer): Tree {
  // Ids as byte arrays (made hex below); 64-bit integers as strings so nanosecond times keep their digits.
  return message.toObject(message.decode(body), { longs: String, bytes: Array, enums: Number })
}

function jsonBody(body: Buffer): Tree {
  return JSON.parse(body.toString('utf8')) as Tree
}

const list = (value: unknown): Tree[] => (Array.isArray(value) ? (value as Tree[]) : [])

/** OTLP/JSON writes ids as hex; protobuf carries bytes. */
function idOf(value: unknown, json: boolean): string {
  if (json) return typeof value === 'string' ? value : ''
  return Array.isArray(value) ? Buffer.from(value as number[]).toString('hex') : ''
}

function spansOf(request: Tree, json: boolean): ReceivedSpan[] {
  return list(request['resourceSpans']).flatMap((resourceSpans) => {
    const resource = attributesOf((resourceSpans['resource'] as Tree | undefined)?.['attributes'])
    return list(resourceSpans['scopeSpans']).flatMap((scope) =>
      list(scope['spans']).map((span) => ({
        traceId: idOf(span['traceId'], json),
        spanId: idOf(span['spanId'], json),
        parentSpanId: idOf(span['parentSpanId'], json),
        name: String(span['name']),
        kind: Number(span['kind']),
        startNs: BigInt(String(span['startTimeUnixNano'])),
        endNs: BigInt(String(span['endTimeUnixNano'])),
        attributes: attributesOf(span['attributes']),
        events: list(span['events']).map((event) => ({
          name: String(event['name']),
          attributes: attributesOf(event['attributes']),
        })),
        statusCode: Number((span['status'] as Tree | undefined)?.['code'] ?? 0),
        resource,
      })),
    )
  })
}

function histogramsOf(request: Tree): ReceivedHistogramPoint[] {
  return list(request['resourceMetrics']).flatMap((resourceMetrics) =>
    list(resourceMetrics['scopeMetrics']).flatMap((scope) =>
      list(scope['metrics']).flatMap((metric) =>
        list((metric['histogram'] as Tree | undefined)?.['dataPoints']).map((point) => ({
          metric: String(metric['name']),
          unit: String(metric['unit'] ?? ''),
          attributes: attributesOf(point['attributes']),
          count: Number(point['count']),
          sum: Number(point['sum']),
          bounds: list(point['explicitBounds']).map(Number),
        })),
      ),
    ),
  )
}

/** OTLP's AnyValue list as a plain record; ints arrive as strings from protobuf (longs) and may from JSON. */
function attributesOf(value: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const entry of list(value)) {
    const any = (entry['value'] ?? {}) as Tree
    const key = String(entry['key'])
    if ('stringValue' in any) out[key] = String(any['stringValue'])
    else if ('intValue' in any) out[key] = Number(any['intValue'])
    else if ('doubleValue' in any) out[key] = Number(any['doubleValue'])
    else if ('boolValue' in any) out[key] = Boolean(any['boolValue'])
    else if ('arrayValue' in any)
      out[key] = list((any['arrayValue'] as Tree | undefined)?.['values']).map((item) => String(item['stringValue']))
    else out[key] = undefined
  }
  return out
}
