/**
 * A second upstream count of a Messages body from a real BPE vocabulary, for measuring the
 * estimator against a tokenizer it was not fitted to (no Claude 3+ vocabulary is public). The
 * framing per request, message and block is the fake upstream's (src/mock/anthropic-messages.ts);
 * only the text counter differs. Counts are memoised per string: the history repeats every request.
 */
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { countWithRunGuard } from '../src/providers/openai/tokenizer/long-run-guard.ts'

export type TruthName = 'o200k' | 'cl100k'

const perMessageTokens = 4
const perBlockTokens = 3
const perRequestTokens = 8
const imageTokens = 1_600
const asText = { disallowedSpecial: new Set<string>() }

type Json = Record<string, unknown>

function withoutMarker(block: Json): string {
  const { cache_control: _ignored, ...rest } = block
  return JSON.stringify(rest)
}

export function truthCounter(name: TruthName): (body: Json) => number {
  const library = name === 'o200k' ? o200k : cl100k
  const memo = new Map<string, number>()
  const text = (value: string): number => {
    const known = memo.get(value)
    if (known !== undefined) return known
    const tokens = countWithRunGuard(value, (piece) => library(piece, asText))
    memo.set(value, tokens)
    return tokens
  }
  const block = (value: Json): number => {
    switch (value['type']) {
      case 'text':
        return perBlockTokens + text(String(value['text'] ?? ''))
      case 'image':
        return perBlockTokens + imageTokens
      case 'tool_use':
        return perBlockTokens + text(String(value['name'] ?? '')) + text(JSON.stringify(value['input'] ?? {}))
      case 'tool_result': {
        const content = value['content']
        if (typeof content === 'string') return perBlockTokens + text(content)
        if (Array.isArray(content))
          return perBlockTokens + (content as Json[]).reduce((sum, inner) => sum + block(inner), 0)
        return perBlockTokens
      }
      case 'thinking':
        return perBlockTokens + text(String(value['thinking'] ?? ''))
      default:
        return perBlockTokens + text(withoutMarker(value))
    }
  }
  return (body) => {
    let tokens = perRequestTokens
    for (const tool of (body['tools'] as Json[] | undefined) ?? []) tokens += text(withoutMarker(tool))
    const system = body['system']
    if (typeof system === 'string') tokens += block({ type: 'text', text: system })
    else if (Array.isArray(system)) for (const each of system as Json[]) tokens += block(each)
    for (const message of (body['messages'] as Json[] | undefined) ?? []) {
      const content = message['content']
      const blocks =
        typeof content === 'string' ? [{ type: 'text', text: content }] : ((content as Json[] | undefined) ?? [])
      tokens += perMessageTokens + blocks.reduce((sum, each) => sum + block(each), 0)
    }
    return tokens
  }
}
