import type { NextMemory } from '../../rewrite/pipeline.ts'
import type { ConversationState } from '../../session/session-store.ts'
import type { ChatSummary, HookRequest, RewriteHookDeps } from './hook-request.ts'

/** The calibration's shared part, read again; a store that is down leaves what this replica knows. */
export async function refreshCalibration(
  deps: RewriteHookDeps,
  model: string,
  scope: string,
  conversation: string,
): Promise<void> {
  try {
    await deps.calibration.refresh(model, scope, conversation)
  } catch {
    // The shared store is down: plan with what this replica knows.
  }
}

/**
 * The conversation's state and, when the economy will price this request, how long finished
 * sessions of its kind ran: read side by side, so the second read adds no round trip's wait.
 */
export async function loadConversation(
  request: HookRequest,
  chat: ChatSummary,
  conversationKey: string,
  kind: string | undefined,
): Promise<{ state: ConversationState | undefined; finishedLengths: readonly number[] }> {
  const { deps, memoryBefore } = request
  const priced = deps.config.rewrite.economy === 'cache-priced' && chat.view.serverManaged !== true
  const [state, finishedLengths] = await Promise.all([
    memoryBefore ? memoryBefore.state : loadState(deps, conversationKey),
    priced && kind !== undefined ? loadFinishedLengths(deps, kind) : [],
  ])
  return { state, finishedLengths }
}

/** What the store kept of finished sessions of this kind; none when it cannot say (the session's own estimate then). */
async function loadFinishedLengths(deps: RewriteHookDeps, kind: string): Promise<readonly number[]> {
  try {
    return (await deps.store.finishedLengths?.(kind)) ?? []
  } catch {
    return []
  }
}

async function loadState(deps: RewriteHookDeps, key: string): Promise<ConversationState | undefined> {
  try {
    return await deps.store.get(key)
  } catch (error) {
    deps.logger.warn(
      { store: deps.store.kind, error: (error as Error).message },
      'session store read failed; rewriting without frozen decisions',
    )
    return undefined
  }
}

export async function saveState(
  deps: RewriteHookDeps,
  key: string,
  state: ConversationState,
  before: ConversationState | undefined,
): Promise<void> {
  try {
    await deps.store.set(key, state, before)
  } catch (error) {
    deps.logger.warn({ store: deps.store.kind, error: (error as Error).message }, 'session store write failed')
  }
}

/** What the conversation keeps for its next request. */
export function nextState(
  next: NextMemory,
  previousTail: number | undefined,
  requests: number,
  lastSeen: number,
  kind: string | undefined,
): ConversationState {
  return Object.assign({}, next, { previousTail, requests, lastSeen, kind })
}
