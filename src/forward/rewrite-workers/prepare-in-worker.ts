import { limitsFor } from '../../config/model-limits.ts'
import { CtxgateError } from '../../errors.ts'
import type { PrepareResult } from '../../request/prepared.ts'
import { firstHeader } from '../../util/headers.ts'
import { usageOnly } from '../rewrite-hook/follow-up.ts'
import type { HookRequest } from '../rewrite-hook/hook-request.ts'
import { prepareWith, type PlanStep, type PreparationSteps } from '../rewrite-hook/prepare-with.ts'
import { WorkerFailed, WorkersBusy, type RewriteWorkers, type WorkerLease } from './pool.ts'
import type { ChatFacts, PlanReply, UntouchedFacts, WorkerHeaders } from './protocol.ts'

/**
 * The preparation of a large body (prepare-with.ts) with its reading and planning done by a
 * worker. A worker that fails or times out sends the body on as the client wrote it (the caller's
 * fail-open); a pool at its byte budget answers 503 in the provider's shape.
 */
export async function prepareInWorker(
  request: HookRequest,
  workers: RewriteWorkers,
  again: (request: HookRequest) => Promise<PrepareResult>,
): Promise<PrepareResult> {
  try {
    return await workers.run(request.original.length, (lease) =>
      prepareWith(request, workerSteps(request, lease), again),
    )
  } catch (error) {
    if (error instanceof WorkersBusy) return busy(error)
    if (error instanceof WorkerFailed)
      request.deps.logger.warn(
        { bytes: request.original.length, error: error.message },
        'rewrite worker failed; the request goes on as the client sent it',
      )
    throw error
  }
}

/** Reading and planning in the leased worker, which keeps the parsed body between the two. */
function workerSteps(request: HookRequest, lease: WorkerLease): PreparationSteps {
  const { deps } = request
  let model = ''
  return {
    async read() {
      // Shared memory is read in place; else a copy moves to the worker, the bytes stay here for a fail-open forward and a refit.
      const read = await lease.read({
        format: request.wire,
        body: request.original.buffer instanceof SharedArrayBuffer ? request.original : await copyOf(request.original),
        headers: own(request.incoming),
      })
      const limits = read.kind === 'chat' ? limitsFor(deps.config, read.model) : undefined
      if (read.kind === 'untouched' || !limits) return { kind: 'untouched', result: untouched(request, read) }
      model = read.model
      const view = { model: read.model, maxOutputTokens: read.maxOutputTokens, serverManaged: read.serverManaged }
      return {
        kind: 'chat',
        chat: { json: read.summary, view, limits },
        hints: read.hints,
        promptTokens: read.promptTokens,
        // Workers never load the reference vocabulary (~37 MB each): the prior sizes new content of bodies this large.
        referenceCount: undefined,
        firstUser: () => read.firstUserMessage,
      }
    },
    plan: async (inputs) => {
      const planned = await lease.plan({
        ...inputs,
        factorInputs: deps.calibration.factorInputs(model, inputs.sized.key, inputs.scope),
        rememberedLimit: deps.calibration.limit(model, inputs.scope),
        toldLimit: request.toldLimit,
      })
      return fromWorker(request, planned)
    },
  }
}

/** The worker's reply as a plan step: the bytes it wrote (transferred), else the client's own. */
function fromWorker(request: HookRequest, planned: PlanReply): PlanStep {
  const { outcome, factor, limits, noteTokens, compaction } = planned
  const common = { factor, limits, noteTokens, compaction }
  if (outcome.kind === 'too-long') return { ...common, kind: 'too-long', outcome }
  const sent = planned.body
  const body = sent ? Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength) : request.original
  const written = {
    body: () => body,
    headers: planned.headers ?? {},
    tail: planned.tail,
    breakpoints: planned.breakpoints,
    promisedResult: planned.promisedResult,
    hideUsageChunk: planned.hideUsageChunk ?? false,
  }
  return { ...common, kind: 'written', outcome, written }
}

/** Bytes copied between turns of the event loop: a 25 MB copy in one go holds it for tens of ms on a busy machine. */
const copyStepBytes = 1024 * 1024

/** The bytes in a buffer of their own (not zero-filled first), copied a megabyte at a time. */
async function copyOf(original: Buffer): Promise<Uint8Array> {
  const copy = Buffer.allocUnsafeSlow(original.length)
  for (let at = 0; at < original.length; at += copyStepBytes) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    original.copy(copy, at, at, Math.min(original.length, at + copyStepBytes))
  }
  return copy
}

/** The headers a worker reads: ctxgate's own (the mode and the budget), never the client's keys. */
function own(incoming: HookRequest['incoming']): WorkerHeaders {
  return {
    'x-ctxgate-mode': firstHeader(incoming['x-ctxgate-mode']),
    'x-ctxgate-budget': firstHeader(incoming['x-ctxgate-budget']),
  }
}

/** As readChat answers a body it leaves alone: the client's bytes, read for usage, counted under its model. */
function untouched(request: HookRequest, read: ChatFacts | UntouchedFacts): PrepareResult {
  const summary = read.summary
  const reason = read.kind === 'untouched' ? read.reason : 'no-model-limits'
  return {
    kind: 'forward',
    prepared: {
      body: request.original,
      followUp: usageOnly(request.format, summary && { body: summary, headers: request.incoming }),
      log: { rewrite: reason },
      accounting: { model: read.model, refusalAvoided: false },
    },
  }
}

function busy(error: WorkersBusy): PrepareResult {
  return {
    kind: 'reject',
    error: new CtxgateError(
      'CTXGATE_OVERLOADED',
      `ctxgate is busy rewriting other large requests; retry shortly (${error.message}).`,
    ),
    log: { rewrite: 'workers-busy' },
    accounting: { model: 'unknown', refusalAvoided: false },
  }
}
