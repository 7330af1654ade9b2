/**
 * What asking which results are in use (src/rewrite/in-use.ts) costs one request, on a synthetic
 * session of N rounds (an Edit and a 100-line read per round): cold, when no result's strings are
 * known yet (once per content: a restart, or a session's first request over budget), and warm, as
 * a new request of the same session (a new message list over the same contents).
 * Usage: tsx bench/in-use-cost.ts [rounds] (default 200)
 */
import { inUse } from '../src/rewrite/in-use.ts'
import type { MessageView } from '../src/rewrite/types.ts'

const rounds = Number(process.argv[2] ?? 200)
const view = (fields: Partial<MessageView> & Pick<MessageView, 'role' | 'hash'>): MessageView => ({
  tokens: 10,
  startsUserTurn: false,
  toolCallIds: [],
  toolResults: [],
  hasThinking: false,
  ...fields,
})
const messages: MessageView[] = [view({ role: 'user', hash: 'task', startsUserTurn: true })]
for (let round = 0; round < rounds; round++) {
  const path = `src/payments/file_${round}.ts`
  const text = Array.from(
    { length: 100 },
    (_, line) =>
      `  ${line}→ export function handler_${round}_${line}(req: Request) { return processPayment(req.body, "merchant-${round}-${line}") } // ${path}`,
  ).join('\n')
  messages.push(
    view({
      role: 'assistant',
      hash: `calls-${round}`,
      toolCallIds: [`c${round}`],
      toolCallNames: ['Edit'],
      toolCallInputs: [
        {
          file_path: path,
          old_string: `export function handler_${round}_3(req: Request) {`,
          new_string: `export function handler_${round}_3(req: Request, ctx: PaymentContext) {\n  validateMerchant(ctx.merchantId)`,
        },
      ],
    }),
  )
  messages.push(
    view({
      role: 'user',
      hash: `results-${round}`,
      toolResults: [{ id: `c${round}`, message: messages.length, tokens: 1_300, hash: `r${round}`, text }],
    }),
  )
}
const resultKb = messages.reduce((sum, message) => sum + message.toolResults.reduce((a, r) => a + r.text.length, 0), 0)
const started = performance.now()
inUse([...messages])
const cold = performance.now() - started
const repeats = 50
const warmStarted = performance.now()
for (let pass = 0; pass < repeats; pass++) inUse([...messages])
const warm = (performance.now() - warmStarted) / repeats
console.log(
  `${rounds} rounds, ${Math.round(resultKb / 1024)} KB of results: cold ${cold.toFixed(1)} ms, warm ${(warm * 1000).toFixed(0)} µs per request`,
)
