import type { ToolDefinition } from '../conversation.ts'

/**
 * Claude Code logs name its tools but not their schemas or the system prompt, which together run
 * well over 10k tokens. Replays use deterministic stand-ins of that size, so
 * cache and budget numbers see a realistic head.
 */
const words = [
  'the',
  'tool',
  'reads',
  'files',
  'from',
  'the',
  'working',
  'tree',
  'and',
  'reports',
  'what',
  'it',
  'found',
  'when',
  'a',
  'command',
  'fails',
  'explain',
  'why',
  'before',
  'trying',
  'again',
  'prefer',
  'small',
  'focused',
  'edits',
  'keep',
  'the',
  'user',
  'informed',
  'about',
  'progress',
  'never',
  'guess',
  'paths',
  'check',
  'them',
  'first',
]

function prose(seed: string, wordCount: number): string {
  let state = [...seed].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7)
  const out: string[] = []
  for (let index = 0; index < wordCount; index++) {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    out.push(words[state % words.length] as string)
    if (index % 14 === 13) out[out.length - 1] += '.'
  }
  return out.join(' ')
}

export function standInSystemPrompt(agent: string): string {
  return `You are ${agent}, an agent that works in a software repository.\n\n${prose(`${agent}-system`, 2_600)}`
}

export function standInTools(names: readonly string[]): ToolDefinition[] {
  return names.map((name) => ({
    name,
    description: `${name}: ${prose(name, 450)}`,
    input_schema: {
      type: 'object',
      properties: { input: { type: 'string', description: prose(`${name}-input`, 40) } },
      required: ['input'],
    },
  }))
}
