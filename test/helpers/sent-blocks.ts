/** The block of a Messages body the upstream received that carries `id` (a tool_use's id, or a tool_result's tool_use_id), written out as it sits in the body. */
export function sentBlock(body: string, type: 'tool_use' | 'tool_result', id: string): string {
  const messages = (JSON.parse(body) as { messages: { content: unknown }[] }).messages
  for (const message of messages)
    if (Array.isArray(message.content))
      for (const block of message.content as { type: string; id?: string; tool_use_id?: string }[])
        if (block.type === type && (type === 'tool_use' ? block.id : block.tool_use_id) === id)
          return JSON.stringify(block)
  throw new Error(`no ${type} ${id} sent`)
}
