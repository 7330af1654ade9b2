/** The bodies the latency benches send: a 2 KB request, and a 300 KB conversation of 150 tool rounds (re-sent, or growing). */

export const smallRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
}

function largeConversation(rounds = 150): unknown[] {
  const messages: unknown[] = [{ role: 'user', content: 'Refactor the billing module and keep the tests green.' }]
  for (let round = 0; round < rounds; round++) {
    const id = `toolu_${round}`
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${round}.` },
        { type: 'tool_use', id, name: 'read_file', input: { path: `src/billing/f${round}.ts` } },
      ],
    })
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content: `export const value${round} = ${round};\n`.repeat(40).slice(0, 1_900),
        },
      ],
    })
  }
  return messages
}

/** The large request: that conversation as a Messages call. */
export function largeRequest(): {
  model: string
  max_tokens: number
  metadata: { user_id: string }
  messages: unknown[]
} {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    metadata: { user_id: 'bench-large' },
    messages: largeConversation(),
  }
}

/** Requests per conversation of the growing request, before a new one starts over at 150 rounds. */
const growingRun = 25

/**
 * The `request`th body of a client whose conversation grows by one round per request, as a real
 * one's does (new bytes each time, the history shared): 150 to 174 rounds (208 to 241 KB), then a
 * new conversation.
 */
export function growingRequest(request: number): ReturnType<typeof largeRequest> {
  const conversation = Math.floor(request / growingRun)
  return {
    ...largeRequest(),
    metadata: { user_id: `bench-growing-${conversation}` },
    messages: largeConversation(150 + (request % growingRun)),
  }
}

const words = (
  'the agent reads a file before it changes anything then runs the tests and reports what failed with ' +
  'the line numbers and a short reason so the next step can fix it without reading everything again'
).split(' ')

/**
 * The `request`th short request of a client that never sends the same text twice, as a real one's
 * first turn or side call: about 2 KB of words, a different sequence for each request.
 */
export function freshSmallRequest(request: number): typeof smallRequest {
  let text = ''
  let state = (request * 2_654_435_761 + 1) % 4_294_967_296
  while (text.length < 2_000) {
    // A linear congruential step (Numerical Recipes' constants): the same words, a new order per request.
    state = (state * 1_664_525 + 1_013_904_223) % 4_294_967_296
    text += `${words[state % words.length] ?? ''}${state % 11 === 0 ? '. ' : ' '}`
  }
  return { ...smallRequest, messages: [{ role: 'user', content: text }] }
}
