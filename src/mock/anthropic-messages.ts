import type { IncomingHttpHeaders } from 'node:http'
import { anthropicAgentContent } from './anthropic-agent.ts'
import { fingerprintOf, type DiagnosticsJson, type PromptFingerprints } from './cache-diagnosis.ts'
import { streamFrames } from './anthropic-stream.ts'
import { blocksOf, checkGenerationFields, InvalidRequest, validate } from './anthropic-validate.ts'
import { countTextTokens, imageTokens } from './token-count.ts'
import type { AnthropicPromptCache, CacheUsage, PromptBlock } from './prompt-cache.ts'
import type { MockAnswer, MockOptions, MockReplyKind } from './types.ts'

type Json = Record<string, unknown>

const perMessageTokens = 4
const perBlockTokens = 3
const perRequestTokens = 8

export function anthropicError(status: number, type: string, message: string): MockAnswer {
  return {
    status,
    json: { type: 'error', error: { type, message }, request_id: `req_mock_${Date.now().toString(36)}` },
  }
}

function ttlOf(block: Json): '5m' | '1h' | undefined {
  const control = block['cache_control'] as Json | undefined
  if (!control || typeof control !== 'object') return undefined
  return control['ttl'] === '1h' ? '1h' : '5m'
}

function withoutCacheControl(block: Json): string {
  if (!('cache_control' in block)) return JSON.stringify(block)
  const { cache_control: _ignored, ...rest } = block
  return JSON.stringify(rest)
}

function blockTokens(block: Json): number {
  switch (block['type']) {
    case 'text':
      return perBlockTokens + countTextTokens(String(block['text'] ?? ''))
    case 'image':
      return perBlockTokens + imageTokens
    case 'tool_use':
      return (
        perBlockTokens +
        countTextTokens(String(block['name'] ?? '')) +
        countTextTokens(JSON.stringify(block['input'] ?? {}))
      )
    case 'tool_result': {
      const content = block['content']
      if (typeof content === 'string') return perBlockTokens + countTextTokens(content)
      if (Array.isArray(content))
        return perBlockTokens + (content as Json[]).reduce((sum, inner) => sum + blockTokens(inner), 0)
      return perBlockTokens
    }
    case 'thinking':
      return perBlockTokens + countTextTokens(String(block['thinking'] ?? ''))
    default:
      return perBlockTokens + countTextTokens(withoutCacheControl(block))
  }
}

/** Tools, then system, then message blocks: the order the cache hashes them in (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). */
export function promptBlocks(request: Json): PromptBlock[] {
  const blocks: PromptBlock[] = []
  const add = (block: Json, tokens: number, extra = 0): void => {
    const breakpoint = ttlOf(block)
    blocks.push({ key: withoutCacheControl(block), tokens: tokens + extra, ...(breakpoint ? { breakpoint } : {}) })
  }
  for (const tool of (request['tools'] as Json[] | undefined) ?? [])
    add(tool, countTextTokens(withoutCacheControl(tool)))
  const system = request['system']
  if (typeof system === 'string') add({ type: 'text', text: system }, blockTokens({ type: 'text', text: system }))
  else if (Array.isArray(system)) for (const block of system as Json[]) add(block, blockTokens(block))
  for (const message of request['messages'] as Json[]) {
    blocksOf(message).forEach((block, index) =>
      add({ role: message['role'], ...block }, blockTokens(block), index === 0 ? perMessageTokens : 0),
    )
  }
  // Top-level cache_control marks the last block (automatic caching, https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
  const automatic = request['cache_control'] as Json | undefined
  const last = blocks[blocks.length - 1]
  if (automatic && last && !last.breakpoint)
    blocks[blocks.length - 1] = { ...last, breakpoint: automatic['ttl'] === '1h' ? '1h' : '5m' }
  return blocks
}

function checkBreakpoints(blocks: PromptBlock[], request: Json): void {
  const explicit = blocks.filter((block) => block.breakpoint).length
  if (explicit > 4)
    throw new InvalidRequest(`A maximum of 4 blocks with cache_control may be provided. Found ${explicit}.`)
  let seen5m = false
  for (const block of blocks) {
    if (block.breakpoint === '5m') seen5m = true
    if (block.breakpoint === '1h' && seen5m) {
      throw new InvalidRequest(
        "cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
      )
    }
  }
  void request
}

export interface AnthropicUsageCounted {
  readonly usage: CacheUsage
  readonly request: Json
  readonly blocks: readonly PromptBlock[]
}

/** Validates, counts and (unless only counting) runs the prompt cache for one request. */
export function countAnthropicRequest(
  body: unknown,
  options: MockOptions,
  cache: AnthropicPromptCache | undefined,
  maxTokens = 0,
): AnthropicUsageCounted {
  const request = validate(body)
  const blocks = promptBlocks(request)
  checkBreakpoints(blocks, request)
  const model = String(request['model'])
  const window = options.windowFor(model)
  const total = perRequestTokens + blocks.reduce((sum, block) => sum + block.tokens, 0)
  if (total > window) throw new InvalidRequest(`prompt is too long: ${total} tokens > ${window} maximum`)
  // The prompt and the reply share the window: the API refuses a max_tokens that does not fit.
  if (total + maxTokens > window)
    throw new InvalidRequest(
      `input length and \`max_tokens\` exceed context limit: ${total} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
    )
  const usage = cache
    ? cache.use(model, blocks, options.minCacheableFor(model))
    : { inputTokens: total, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, totalTokens: total }
  return {
    usage: { ...usage, inputTokens: usage.inputTokens + perRequestTokens, totalTokens: total },
    request,
    blocks,
  }
}

export function anthropicCountTokens(body: unknown, options: MockOptions): MockAnswer {
  try {
    const { usage } = countAnthropicRequest(body, { ...options, windowFor: () => Number.MAX_SAFE_INTEGER }, undefined)
    return { status: 200, json: { input_tokens: usage.totalTokens } }
  } catch (error) {
    if (error instanceof InvalidRequest) return anthropicError(400, 'invalid_request_error', error.message)
    throw error
  }
}

/** Tokens the reply's content would take to generate, in the mock's own count. */
function outputTokensOf(content: readonly Json[]): number {
  return content.reduce(
    (sum, block) =>
      sum +
      (block['type'] === 'tool_use'
        ? perBlockTokens + countTextTokens(String(block['name'])) + countTextTokens(JSON.stringify(block['input']))
        : countTextTokens(String(block['text'] ?? ''))),
    0,
  )
}

/** The agent loop's reply when it is on and a shell is offered; else a tool call on request, or text. */
function replyContent(request: Json, options: MockOptions, replyKind: MockReplyKind, sequence: number): Json[] {
  const agent =
    options.agentSteps === undefined
      ? undefined
      : anthropicAgentContent(request, options.agentSteps, sequence, options.agentRereadEvery)
  if (agent) return agent
  const tools = (request['tools'] as Json[] | undefined) ?? []
  const toolName = typeof tools[0]?.['name'] === 'string' ? String(tools[0]['name']) : undefined
  if (replyKind === 'tool_use' && toolName !== undefined)
    return [{ type: 'tool_use', id: `toolu_mock_${sequence}`, name: toolName, input: { step: sequence } }]
  return [{ type: 'text', text: options.replyText(sequence) }]
}

/** What the mock needs to answer the cache-diagnosis beta: the request's headers and what it remembers. */
export interface DiagnosisContext {
  readonly headers: IncomingHttpHeaders
  readonly fingerprints: PromptFingerprints
}

const diagnosisBeta = 'cache-diagnosis-2026-04-07'

/**
 * The answer's `diagnostics` when the client opted in (the beta header and a `diagnostics` field),
 * remembering this prompt under the answer's id; undefined otherwise, and then nothing is added.
 */
function diagnose(
  counted: AnthropicUsageCounted,
  options: MockOptions,
  context: DiagnosisContext | undefined,
  messageId: string,
): { readonly diagnostics: DiagnosticsJson } | undefined {
  const { request, blocks } = counted
  const field = request['diagnostics']
  const betas = String(context?.headers['anthropic-beta'] ?? '').split(',')
  if (!context || !betas.some((beta) => beta.trim() === diagnosisBeta)) return undefined
  if (typeof field !== 'object' || field === null || Array.isArray(field)) return undefined
  const model = String(request['model'])
  const fingerprint = fingerprintOf(model, blocks, promptParts(request), options.minCacheableFor(model))
  const previousId = (field as Json)['previous_message_id']
  const diagnostics = typeof previousId === 'string' ? context.fingerprints.diagnose(previousId, fingerprint) : null
  context.fingerprints.remember(messageId, fingerprint)
  return { diagnostics }
}

/** How many prompt blocks are tools and system, counted as promptBlocks lays them out. */
function promptParts(request: Json): { toolCount: number; systemCount: number } {
  const tools = request['tools']
  const system = request['system']
  return {
    toolCount: Array.isArray(tools) ? tools.length : 0,
    systemCount: typeof system === 'string' ? 1 : Array.isArray(system) ? system.length : 0,
  }
}

export function anthropicMessages(
  body: unknown,
  options: MockOptions,
  cache: AnthropicPromptCache,
  replyKind: MockReplyKind,
  sequence: number,
  diagnosis?: DiagnosisContext,
): MockAnswer {
  let counted: AnthropicUsageCounted
  try {
    checkGenerationFields(body)
    const replyRoom = options.replyRoomInWindow === false ? 0 : Number((body as Json)['max_tokens'])
    counted = countAnthropicRequest(body, options, cache, replyRoom)
  } catch (error) {
    if (error instanceof InvalidRequest) return anthropicError(400, 'invalid_request_error', error.message)
    throw error
  }
  const { request, usage } = counted
  const id = `msg_mock_${sequence}`
  const diagnosed = diagnose(counted, options, diagnosis, id)
  const model = String(request['model'])
  const content = replyContent(request, options, replyKind, sequence)
  const outputTokens = outputTokensOf(content)
  const usageJson = {
    input_tokens: usage.inputTokens,
    cache_creation_input_tokens: usage.cacheWrite5mTokens + usage.cacheWrite1hTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheWrite5mTokens,
      ephemeral_1h_input_tokens: usage.cacheWrite1hTokens,
    },
    output_tokens: outputTokens,
    service_tier: 'standard',
  }
  const stopReason = content.some((block) => block['type'] === 'tool_use') ? 'tool_use' : 'end_turn'
  const ledger = { ...usage, outputTokens }
  if (request['stream'] !== true) {
    return {
      status: 200,
      usage: ledger,
      json: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: usageJson,
        ...diagnosed,
      },
    }
  }
  return {
    status: 200,
    usage: ledger,
    sse: streamFrames({ id, model, content, stopReason, usage: usageJson, outputTokens, ...diagnosed }),
  }
}
