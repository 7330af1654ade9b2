import fc from 'fast-check'

export type Json = Record<string, unknown>

/** Tool output of a given kind and size, to vary how text tokenizes. */
export function output(kind: 'prose' | 'json' | 'hex' | 'log', size: number, seed: number): string {
  const piece =
    kind === 'prose'
      ? `Line ${seed}: the build step finished and the tests for module ${seed} ran. `
      : kind === 'json'
        ? JSON.stringify({ id: seed, name: `item-${seed}`, tags: ['a', 'b'], ok: seed % 2 === 0 })
        : kind === 'hex'
          ? `${((seed * 2_654_435_761) >>> 0).toString(16).padStart(8, '0')}deadbeef${seed.toString(16)}`
          : `2026-11-30T10:00:${String(seed % 60).padStart(2, '0')}Z INFO request ${seed} done\n`
  return piece.repeat(Math.max(1, Math.ceil(size / piece.length))).slice(0, size)
}

export interface Step {
  readonly kind: 'round' | 'turn'
  readonly calls: number
  readonly sizes: readonly number[]
  readonly outputKind: 'prose' | 'json' | 'hex' | 'log'
  readonly thinking: boolean
  readonly extraField: boolean
}

export const stepArbitrary: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom('round', 'round', 'round', 'turn'),
  calls: fc.integer({ min: 1, max: 3 }),
  sizes: fc.array(fc.integer({ min: 20, max: 12_000 }), { minLength: 3, maxLength: 3 }),
  outputKind: fc.constantFrom('prose', 'json', 'hex', 'log'),
  thinking: fc.boolean(),
  extraField: fc.boolean(),
})

/** A whole Anthropic conversation: the task, then tool rounds and user turns, ending on a user message. */
export function buildMessages(steps: readonly Step[]): Json[] {
  const messages: Json[] = [
    { role: 'user', content: 'Task: fix the failing build and report.', x_client_field: { keep: true } },
  ]
  steps.forEach((step, stepIndex) => {
    if (step.kind === 'turn') {
      messages.push({ role: 'assistant', content: [{ type: 'text', text: `Done with part ${stepIndex}.` }] })
      messages.push({ role: 'user', content: [{ type: 'text', text: `Now part ${stepIndex + 1}, please.` }] })
      return
    }
    const ids = Array.from({ length: step.calls }, (_, call) => `toolu_${stepIndex}_${call}`)
    const assistant: Json[] = [
      ...(step.thinking
        ? [{ type: 'thinking', thinking: `Thinking about step ${stepIndex}.`, signature: `sig${stepIndex}` }]
        : []),
      { type: 'text', text: `Step ${stepIndex}: running ${step.calls} tools.` },
      ...ids.map((id) => ({ type: 'tool_use', id, name: 'run', input: { step: stepIndex, id } })),
    ]
    messages.push({ role: 'assistant', content: assistant })
    messages.push({
      role: 'user',
      content: ids.map((id, call) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: output(step.outputKind, step.sizes[call] ?? 100, stepIndex * 7 + call),
        ...(step.extraField ? { x_block_field: call } : {}),
      })),
    })
  })
  return messages
}

/** The request an agent sends before its k-th reply: everything up to and including the k-th user message. */
export function requestsOf(messages: readonly Json[]): Json[][] {
  const requests: Json[][] = []
  messages.forEach((message, index) => {
    if (message['role'] === 'user') requests.push(messages.slice(0, index + 1))
  })
  return requests
}

export function anthropicBody(messages: readonly Json[], extra: Json = {}): Json {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1_000,
    system: 'You are a careful agent.',
    tools: [{ name: 'run', description: 'Run a step.', input_schema: { type: 'object' } }],
    messages,
    x_top_level_field: 'kept',
    ...extra,
  }
}
