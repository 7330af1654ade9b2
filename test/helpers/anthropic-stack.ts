import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll } from 'vitest'
import { startStack, type Stack } from './stack.ts'

/**
 * A stack with its defaults and the official Anthropic client pointed at it (no SDK retries), for the
 * enclosing suite: started before its first test, closed after its last.
 */
export function useAnthropicStack(): { readonly stack: Stack; readonly client: Anthropic } {
  let started: { readonly stack: Stack; readonly client: Anthropic } | undefined
  beforeAll(async () => {
    const stack = await startStack()
    started = {
      stack,
      client: new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test-key-0001', maxRetries: 0 }),
    }
  })
  afterAll(() => started?.stack.close())
  const running = () => {
    if (!started) throw new Error('the Anthropic stack is not running')
    return started
  }
  return {
    get stack() {
      return running().stack
    },
    get client() {
      return running().client
    },
  }
}
