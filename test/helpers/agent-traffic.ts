import Anthropic from '@anthropic-ai/sdk'

export interface AgentRunOptions {
  readonly client: Anthropic
  readonly model: string
  readonly steps: number
  /** Characters of tool output per step (about a quarter as many tokens). */
  readonly outputChars: number
  /** Put into every tool output and the task, so tests can look for it where it must not be. */
  readonly marker: string
  readonly headers?: Readonly<Record<string, string>>
  /** Called after each answer with the request's number (1-based). */
  readonly afterEach?: (request: number) => Promise<void> | void
}

/**
 * A coding agent's loop as the SDK sends it: one task, then a tool round per step whose output is
 * resent on every later request, so the prompt grows until ctxgate has to edit it.
 */
export async function runAgentSession(options: AgentRunOptions): Promise<void> {
  const messages: Anthropic.MessageParam[] = [
    { role: 'user', content: `Task ${options.marker}: find why the build fails and fix it.` },
  ]
  for (let step = 1; step <= options.steps; step++) {
    await options.client.messages.create(
      {
        model: options.model,
        max_tokens: 1024,
        system: 'You are a careful coding agent.',
        tools: [{ name: 'run', description: 'Run a shell command', input_schema: { type: 'object' } }],
        messages,
      },
      options.headers ? { headers: { ...options.headers } } : undefined,
    )
    await options.afterEach?.(step)
    const id = `toolu_${step}`
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${step}: looking at the logs.` },
        { type: 'tool_use', id, name: 'run', input: { cmd: `cat build-${step}.log` } },
      ],
    })
    const line = `build ${step} ${options.marker} compiled module ${step} with warnings; `
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: id, content: line.repeat(Math.ceil(options.outputChars / line.length)) },
      ],
    })
  }
}
