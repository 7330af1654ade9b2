import { setPriority } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { parentPort, workerData } from 'node:worker_threads'
import { Calibration } from '../../calibration/calibration.ts'
import { createLogger } from '../../log/logger.ts'
import { exactCounters } from '../../providers/registry.ts'
import { TokenEstimator, withoutReference } from '../../rewrite/estimate.ts'
import { MemorySessionStore } from '../../session/memory-store.ts'
import type { RewriteHookDeps } from '../rewrite-hook/hook-request.ts'
import type { FromRewriteWorker, PlanReply, RewriteWorkerData, ToRewriteWorker } from './protocol.ts'
import { planPhase, readPhase, type HeldChat } from './worker-phases.ts'

/**
 * A rewrite worker: parses, plans and serializes one large body at a time off the main thread
 * (pool.ts starts it). It holds no state of its own between jobs beyond caches (token counts):
 * the session, calibration and holdout stay on the main thread, which sends what the plan reads.
 */
/** Nice 10: below the main thread, above the OpenTelemetry export worker (19). */
const workerNice = 10
const port = parentPort
if (!port) throw new Error('rewrite-worker.ts runs as a worker thread (pool.ts starts it)')
// A lower CPU priority for this thread only (on Linux a thread's nice value is its own,
// setpriority(2)): when the cores are busy, the main thread's relays and small requests run first.
try {
  setPriority(workerNice)
} catch {
  // Not permitted or not supported here: the worker runs at the process's priority.
}
const { config } = workerData as RewriteWorkerData
const deps: RewriteHookDeps = {
  config,
  // Never called here: the main thread reads and writes the session store.
  store: new MemorySessionStore(config.sessions),
  calibration: new Calibration(),
  // Workers never load the reference vocabulary (~37 MB each): the main thread sizes new content by the prior for them.
  estimator: new TokenEstimator(withoutReference(exactCounters)),
  logger: createLogger('silent'),
}
/**
 * A full collection after each job: a large body leaves its parse tree, strings and the output as
 * garbage, and V8 would otherwise keep the heap it grew to (RSS) until its next collection. The
 * `gc` function is exposed to this thread only (v8.setFlagsFromString, Node's documented way).
 */
setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void
let held: { readonly job: number; readonly chat: HeldChat } | undefined

const send = (message: FromRewriteWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer)

port.on('message', (message: ToRewriteWorker) => {
  void handle(message).catch((error: unknown) =>
    send({ job: message.job, kind: 'failed', error: error instanceof Error ? error.message : String(error) }),
  )
})

// Loaded: the pool starts timing jobs from here.
port.postMessage('ready')

async function handle(message: ToRewriteWorker): Promise<void> {
  if (message.kind === 'end') {
    held = undefined
    collect()
    return
  }
  if (message.kind === 'read') {
    held = undefined
    const read = await readPhase(deps, message)
    if (read.held) held = { job: message.job, chat: read.held }
    return send({ job: message.job, kind: 'done', reply: read.reply })
  }
  if (held?.job !== message.job) throw new Error('plan asked for a body this worker does not hold')
  const reply = planPhase(held.chat, message)
  held = undefined
  const body = reply.body && standalone(reply.body)
  send(
    { job: message.job, kind: 'done', reply: { ...reply, body } satisfies PlanReply },
    body ? [body.buffer as ArrayBuffer] : [],
  )
}

/** Bytes in a buffer of their own, so it can be transferred (a slice of Node's pool, or shared memory, cannot). */
function standalone(bytes: Uint8Array): Uint8Array {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
  if (whole && !(bytes.buffer instanceof SharedArrayBuffer)) return bytes
  return new Uint8Array(bytes)
}
