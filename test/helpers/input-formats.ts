import type { ChatAdapter } from '../../src/providers/adapter-contract.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { openaiChatAdapter } from '../../src/providers/openai/chat-adapter.ts'
import { openaiResponsesAdapter } from '../../src/providers/openai/responses-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { runPipeline, type ConversationMemory, type PipelineOutcome } from '../../src/rewrite/pipeline.ts'
import type { RewritePolicy } from '../../src/rewrite/types.ts'
import type { Json } from '../../src/util/json.ts'

/** Conversations of tool rounds in each wire format, sent through its adapter and the pipeline (old tool inputs' tests). */
export const estimator = new TokenEstimator()
export const policy: RewritePolicy = {
  strategy: 'clear-only',
  keepRecentRounds: 3,
  foldMinTokens: 300,
  clearBatch: 4,
  lowWater: 0.6,
}
export const code = (round: number, side: string, lines = 40): string =>
  Array.from({ length: lines }, (_, line) => `  const ${side}_${round}_${line} = compute(${line}, "${side}")`).join(
    '\n',
  )

/** A conversation of Edit rounds whose inputs are the only large thing in it, in one wire format. */
export interface Format {
  readonly adapter: ChatAdapter
  /** `name`: the tool's name where the format lets it vary (Chat, Responses; Messages always calls Edit). */
  body(rounds: number, inputFor?: (round: number) => Record<string, unknown>, name?: string): Json
  /** Each call's input as sent in the body, by call id. */
  inputs(body: Json): Map<string, unknown>
}

export const editInput = (round: number): Record<string, unknown> => ({
  file_path: `src/f${round}.ts`,
  old_string: code(round, 'old'),
  new_string: code(round, 'new'),
})

export const messagesFormat: Format = {
  adapter: anthropicMessagesAdapter,
  body: (rounds, inputFor = editInput) => ({
    model: 'claude-test',
    max_tokens: 100,
    system: 'You are an agent.',
    messages: [
      { role: 'user', content: 'Edit the files.' },
      ...Array.from({ length: rounds }, (_, round) => [
        { role: 'assistant', content: [{ type: 'tool_use', id: `c${round}`, name: 'Edit', input: inputFor(round) }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: `c${round}`, content: 'ok' }] },
      ]).flat(),
    ],
  }),
  inputs: (body) =>
    new Map(
      (body['messages'] as Json[]).flatMap((message) =>
        Array.isArray(message['content'])
          ? (message['content'] as Json[])
              .filter((b) => b['type'] === 'tool_use')
              .map((b) => [String(b['id']), b['input']] as const)
          : [],
      ),
    ),
}

export const chatFormat: Format = {
  adapter: openaiChatAdapter,
  body: (rounds, inputFor = editInput, name = 'edit_file') => ({
    model: 'gpt-test',
    messages: [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: 'Edit the files.' },
      ...Array.from({ length: rounds }, (_, round) => [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `c${round}`,
              type: 'function',
              function: { name, arguments: JSON.stringify(inputFor(round)) },
            },
          ],
        },
        { role: 'tool', tool_call_id: `c${round}`, content: 'ok' },
      ]).flat(),
    ],
  }),
  inputs: (body) =>
    new Map(
      (body['messages'] as Json[]).flatMap((message) =>
        ((message['tool_calls'] as Json[] | undefined) ?? []).map(
          (call) => [String(call['id']), (call['function'] as Json)['arguments']] as const,
        ),
      ),
    ),
}

export const responsesFormat: Format = {
  adapter: openaiResponsesAdapter,
  body: (rounds, inputFor = editInput, name = 'edit_file') => ({
    model: 'gpt-test',
    instructions: 'You are an agent.',
    input: [
      { type: 'message', role: 'user', content: 'Edit the files.' },
      ...Array.from({ length: rounds }, (_, round) =>
        round % 2 === 0
          ? [
              {
                type: 'function_call',
                call_id: `c${round}`,
                name,
                arguments: JSON.stringify(inputFor(round)),
              },
              { type: 'function_call_output', call_id: `c${round}`, output: 'ok' },
            ]
          : [
              {
                type: 'custom_tool_call',
                call_id: `c${round}`,
                name: 'apply_patch',
                input: `*** Begin Patch\n*** Update File: src/f${round}.ts\n${code(round, 'p')}\n*** End Patch`,
              },
              { type: 'custom_tool_call_output', call_id: `c${round}`, output: 'ok' },
            ],
      ).flat(),
    ],
  }),
  inputs: (body) =>
    new Map(
      (body['input'] as Json[])
        .filter((item) => String(item['type']).endsWith('_call'))
        .map((item) => [String(item['call_id']), item['arguments'] ?? item['input']] as const),
    ),
}

export type Rewritten = Extract<PipelineOutcome, { kind: 'rewritten' }>

/** One request through the adapter and the pipeline, and the body the upstream would get. */
export function send(
  format: Format,
  body: Json,
  memory: ConversationMemory | undefined,
  budget: number,
  clear: boolean | 'superseded' = true,
): { outcome: Rewritten; sent: Json } {
  const view = format.adapter.view(body, estimator)
  const outcome = runPipeline({
    view,
    memory,
    limits: { window: 1_000_000, budget },
    policy: { ...policy, clearToolInputs: clear },
    factor: 1,
    estimator,
    note: undefined,
    dropNoteFraming: 3,
  })
  if (outcome.kind !== 'rewritten') throw new Error('too long')
  const sent = format.adapter.apply(body, view, {
    edits: outcome.edits,
    sessionId: 's',
    minCacheableTokens: Number.POSITIVE_INFINITY,
    thinkingBound: false,
    firstEditedMessage: outcome.report.firstEditedMessage,
    estimator,
  }).body
  return { outcome, sent }
}

export const formats: [string, Format][] = [
  ['Messages', messagesFormat],
  ['Chat', chatFormat],
  ['Responses', responsesFormat],
]
