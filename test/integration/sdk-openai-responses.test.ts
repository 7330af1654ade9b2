import OpenAI from 'openai'
import { ResponsesWS } from 'openai/resources/responses/ws'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.ts'

let stack: Stack
let client: OpenAI

beforeAll(async () => {
  stack = await startStack({ mock: { agentSteps: 3 } })
  client = new OpenAI({ baseURL: `${stack.proxyUrl}/v1`, apiKey: 'sk-openai-test-key-0004', maxRetries: 0 })
})
afterAll(() => stack.close())
beforeEach(() => stack.mock.reset())

const shell: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'exec_command',
  strict: false,
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
}

describe('OpenAI SDK, Responses API through ctxgate to the mock', () => {
  it('assembles a streamed response with responses.stream().finalResponse()', async () => {
    const stream = client.responses.stream({ model: 'gpt-5', input: 'Say hi' })
    const numbers: number[] = []
    stream.on('event', (event) => numbers.push(event.sequence_number))
    const final = await stream.finalResponse()
    expect(final.output_text).toContain('mock upstream')
    expect(final.usage?.input_tokens).toBeGreaterThan(0)
    expect(numbers).toEqual(numbers.map((_, index) => index))
  })

  it('runs the shell tool loop statelessly over HTTP: function calls, then a final answer', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Look around' }]
    const commands: string[] = []
    for (let step = 0; step < 10; step++) {
      const response = await client.responses
        .stream({ model: 'gpt-5', input, tools: [shell], store: false })
        .finalResponse()
      const call = response.output.find((item) => item.type === 'function_call')
      if (!call) {
        expect(response.output_text).toContain('ran 3 commands')
        break
      }
      commands.push((JSON.parse(call.arguments) as { cmd: string }).cmd)
      input.push(call, { type: 'function_call_output', call_id: call.call_id, output: 'ok' })
    }
    expect(commands).toEqual(['seq 1 3000', 'ls -la /usr/lib', 'seq 1 5000 | tail -n 2500'])
  })

  it('speaks the WebSocket transport with the SDK ResponsesWS client', async () => {
    const socket = new ResponsesWS(client)
    const completed = new Promise<OpenAI.Responses.Response>((resolve, reject) => {
      socket.on('response.completed', (event) => resolve(event.response))
      socket.on('error', reject)
    })
    socket.send({ type: 'response.create', model: 'gpt-5', store: false, input: 'Say hi over a socket' })
    const response = await completed
    socket.close()
    const message = response.output[0]
    expect(
      message?.type === 'message' && message.content[0]?.type === 'output_text' && message.content[0].text,
    ).toContain('mock upstream')
    expect(stack.mock.requests.map((request) => [request.method, request.url])).toEqual([['WS', '/v1/responses']])
    expect(stack.mock.requests[0]?.headers['authorization']).toBe('Bearer sk-openai-test-key-0004')
  })
})
