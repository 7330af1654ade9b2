import Anthropic from '@anthropic-ai/sdk'
import { suiteResource } from './suite-resource.ts'
import { startStack, type Stack } from './stack.ts'

/**
 * A stack with its defaults and the official Anthropic client pointed at it (no SDK retries), for the
 * enclosing suite: started before its first test, closed after its last.
 */
export function useAnthropicStack(): { readonly stack: Stack; readonly client: Anthropic } {
  const running = suiteResource(
    async () => {
      const stack = await startStack()
      return {
        stack,
        client: new Anthropic({ baseURL: stack.proxyUrl, apiKey: 'sk-ant-test-key-0001', maxRetries: 0 }),
      }
    },
    ({ stack }) => stack.close(),
  )
  return {
    get stack() {
      return running().stack
    },
    get client() {
      return running().client
    },
  }
}
