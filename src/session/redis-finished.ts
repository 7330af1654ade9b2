/**
 * Finished sessions in Redis, where a conversation ends by its key expiring and no replica sees it
 * go. Each write also files the conversation under its kind (a sorted set scored by last-seen time,
 * a hash of request counts); whoever next reads or writes that kind moves the ones idle past the
 * TTL into the kind's capped list of finished lengths. Lua keeps each move atomic, so two replicas
 * never count one conversation twice.
 */
import type { Redis } from 'ioredis'
import { finishedKept } from './finished-sessions.ts'

/** Conversations of one kind filed while live; past this the longest idle are dropped uncounted. */
export const liveKept = 10_000
/** A kind's finished lengths outlive its last session by this long (at least twice the idle TTL). */
export const finishedHistoryMs = 7 * 24 * 60 * 60_000
/** Live conversations are filed this many idle TTLs past the newest write: past that none is live, and a kind nobody uses again leaves nothing behind. */
const liveTtlIdles = 2
/** Conversations moved per call: bounds the time one script holds Redis. */
const harvestBatch = 200

/**
 * A key of the wrong type (garbage, or left by another build) would make every command on it fail,
 * and with it the whole script, so no conversation of that kind would be saved again. Each script
 * first deletes such keys (what they held could not be read anyway) and returns how many it deleted.
 */
const repair = `
local repaired = 0
local function expect(key, wanted)
  local found = redis.call('TYPE', key)['ok']
  if found ~= 'none' and found ~= wanted then
    redis.call('DEL', key)
    repaired = repaired + 1
  end
end
`

/** Moves conversations last seen before ARGV[1] into the finished list KEYS[3] (capped at ARGV[2], expiring after ARGV[3] ms). */
const harvest = `${repair}
local function harvest(live, lengths, finished, cutoff, keep, historyMs)
  local ended = redis.call('ZRANGEBYSCORE', live, '-inf', '(' .. cutoff, 'LIMIT', 0, ${harvestBatch})
  for _, member in ipairs(ended) do
    local length = redis.call('HGET', lengths, member)
    if length then redis.call('RPUSH', finished, length) end
    redis.call('HDEL', lengths, member)
    redis.call('ZREM', live, member)
  end
  if #ended > 0 then
    redis.call('LTRIM', finished, -tonumber(keep), -1)
    redis.call('PEXPIRE', finished, historyMs)
  end
end
`

/** KEYS: live, lengths, finished. ARGV: cutoff, keep, historyMs. Returns the keys repaired and the finished lengths, oldest first. */
const readScript = `${harvest}
expect(KEYS[1], 'zset')
expect(KEYS[2], 'hash')
expect(KEYS[3], 'list')
harvest(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
return {repaired, redis.call('LRANGE', KEYS[3], 0, -1)}
`

/**
 * KEYS: conversation, live, lengths, finished, and the live and lengths of the kind it was filed
 * under before (the same when unchanged). ARGV: cutoff, keep, historyMs, state JSON, idle TTL ms,
 * member, last seen, requests, live cap, live TTL ms. Writes the state and files it under its kind.
 */
const writeScript = `${harvest}
expect(KEYS[2], 'zset')
expect(KEYS[3], 'hash')
expect(KEYS[4], 'list')
expect(KEYS[5], 'zset')
expect(KEYS[6], 'hash')
harvest(KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3])
if KEYS[5] ~= KEYS[2] then
  redis.call('ZREM', KEYS[5], ARGV[6])
  redis.call('HDEL', KEYS[6], ARGV[6])
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[6])
redis.call('HSET', KEYS[3], ARGV[6], ARGV[8])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[9])
if over > 0 then
  local dropped = redis.call('ZPOPMIN', KEYS[2], over)
  for index = 1, #dropped, 2 do redis.call('HDEL', KEYS[3], dropped[index]) end
end
redis.call('PEXPIRE', KEYS[2], ARGV[10])
redis.call('PEXPIRE', KEYS[3], ARGV[10])
return repaired
`

interface FinishedCommands {
  ctxgateFinishedRead(...args: (string | number)[]): Promise<unknown>
  ctxgateStateWrite(...args: (string | number)[]): Promise<unknown>
}

/** One conversation's write, filed under its kind. */
export interface FiledState {
  readonly conversationKey: string
  readonly json: string
  readonly kind: string
  /** The kind the conversation was filed under before, when it changed (a model switch, new tools): it leaves that one. */
  readonly kindBefore?: string
  readonly lastSeen: number
  readonly requests: number
}

export class RedisFinishedSessions {
  readonly #redis: Redis & FinishedCommands
  readonly #idleTtlMs: number
  readonly #historyMs: number
  readonly #now: () => number
  readonly #liveKept: number

  readonly #onRepaired: (keys: number) => void

  constructor(
    redis: Redis,
    idleTtlMs: number,
    now: () => number,
    liveCap = liveKept,
    onRepaired: (keys: number) => void = () => undefined,
  ) {
    this.#onRepaired = onRepaired
    redis.defineCommand('ctxgateFinishedRead', { numberOfKeys: 3, lua: readScript })
    redis.defineCommand('ctxgateStateWrite', { numberOfKeys: 6, lua: writeScript })
    this.#redis = redis as Redis & FinishedCommands
    this.#idleTtlMs = idleTtlMs
    this.#historyMs = Math.max(finishedHistoryMs, 2 * idleTtlMs)
    this.#now = now
    this.#liveKept = liveCap
  }

  /** The finished lengths of a kind after moving in those that have just finished (raw: the caller validates). */
  async read(kind: string): Promise<unknown> {
    const reply = await this.#redis.ctxgateFinishedRead(...kindKeys(kind), ...this.#harvestArgs())
    if (!Array.isArray(reply)) return undefined
    this.#counted(reply[0])
    return reply[1]
  }

  async write(state: FiledState): Promise<void> {
    this.#counted(await this.#filed(state))
  }

  #counted(repaired: unknown): void {
    if (typeof repaired === 'number' && repaired > 0) this.#onRepaired(repaired)
  }

  #filed(state: FiledState): Promise<unknown> {
    const [liveBefore, lengthsBefore] = kindKeys(state.kindBefore ?? state.kind)
    return this.#redis.ctxgateStateWrite(
      `conv:${state.conversationKey}`,
      ...kindKeys(state.kind),
      liveBefore,
      lengthsBefore,
      ...this.#harvestArgs(),
      state.json,
      this.#idleTtlMs,
      state.conversationKey,
      state.lastSeen,
      state.requests,
      this.#liveKept,
      liveTtlIdles * this.#idleTtlMs,
    )
  }

  #harvestArgs(): [number, number, number] {
    return [this.#now() - this.#idleTtlMs, finishedKept, this.#historyMs]
  }
}

function kindKeys(kind: string): [string, string, string] {
  return [`live:${kind}`, `lengths:${kind}`, `finished:${kind}`]
}
