import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suiteResource } from './suite-resource.ts'
import { startStack, type Stack } from './stack.ts'

export interface ScriptedUpstream {
  readonly url: string
  /** Replaces the handler for the next requests. */
  handle(handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>): void
  close(): Promise<void>
}

/** A bare HTTP server whose answer each test writes by hand, byte by byte if it likes. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let current: (request: IncomingMessage, response: ServerResponse) => void | Promise<void> = (_request, response) => {
    response.writeHead(500)
    response.end()
  }
  const server = createServer((request, response) => {
    Promise.resolve(current(request, response)).catch(() => response.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handle(handler) {
      current = handler
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** ctxgate pointed (for both providers) at a scripted upstream. */
export async function startScriptedStack(): Promise<{
  upstream: ScriptedUpstream
  stack: Stack
  close: () => Promise<void>
}> {
  const upstream = await startScriptedUpstream()
  const stack = await startStack({
    config: { upstreams: { anthropic: { url: upstream.url }, openai: { url: upstream.url } } },
  })
  return {
    upstream,
    stack,
    close: async () => {
      await stack.close()
      await upstream.close()
    },
  }
}

/** A scripted stack for the enclosing suite: started before its first test, closed after its last. */
export function useScriptedStack(): { readonly upstream: ScriptedUpstream; readonly stack: Stack } {
  const running = suiteResource(startScriptedStack, (started) => started.close())
  return {
    get upstream() {
      return running().upstream
    },
    get stack() {
      return running().stack
    },
  }
}
