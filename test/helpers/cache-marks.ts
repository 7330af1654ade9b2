import type { Json } from '../../src/util/json.ts'

/** Where a Messages body's blocks carry cache_control, as `message.block`. */
export function markedBlocks(body: Json): string[] {
  return (body['messages'] as Json[]).flatMap((message, index) =>
    (Array.isArray(message['content']) ? (message['content'] as Json[]) : []).flatMap((block, at) =>
      block['cache_control'] ? [`${index}.${at}`] : [],
    ),
  )
}

/** Like Claude Code's: two system blocks, both marked (with its newest block, three of the four slots). */
export const twoMarkedSystemBlocks: Json[] = [
  { type: 'text', text: 'A', cache_control: { type: 'ephemeral' } },
  { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
]
