import Anthropic from '@anthropic-ai/sdk'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
beforeAll(async () => {
  stack = await startStack()
})
afterAll(() => stack?.close())

const deviceId = 'a3f1c9e27b4d8f60a3f1c9e27b4d8f60a3f1c9e27b4d8f60a3f1c9e27b4d8f60'
const userId = `user_${deviceId}_account_0b5e4c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b_session_7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c2d`

describe("Claude Code's metadata.user_id", () => {
  it('does not put the raw user_id (its device id) in the log or /ctxgate/sessions, and keeps the session one session', async () => {
    const client = new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-privacy', maxRetries: 0 })
    for (const content of ['first', 'second'])
      await client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 16,
        metadata: { user_id: userId },
        messages: [{ role: 'user', content }],
      })
    const listed = await (await request(`${stack.proxyUrl}/ctxgate/sessions`)).body.text()
    expect(listed).not.toContain(deviceId)
    expect(stack.logLines.join('\n')).not.toContain(deviceId)
    const sessions = (JSON.parse(listed) as { sessions: { sessionId?: string; id?: string; requests?: number }[] })
      .sessions
    expect(sessions).toHaveLength(1)
    const [session] = sessions
    expect(JSON.stringify(session)).toMatch(/u-[0-9a-f]{16}/)
    const logged = stack.logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['msg'] === 'request')
      .map((line) => line['session'])
    expect(logged).toHaveLength(2)
    expect(new Set(logged).size).toBe(1)
    expect(String(logged[0])).toMatch(/^u-[0-9a-f]{16}$/)
  })
})
