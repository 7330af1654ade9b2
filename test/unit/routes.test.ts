import { describe, expect, it } from 'vitest'
import { upstreamForPassthrough, upstreamPath } from '../../src/providers/routes.ts'

describe('upstreamPath', () => {
  it.each([
    ['anthropic', '', '/v1/messages?beta=true', '/v1/messages?beta=true'],
    ['anthropic', '/proxy', '/v1/models', '/proxy/v1/models'],
    ['openai', '', '/v1/chat/completions', '/v1/chat/completions'],
    ['openai', '', '/chat/completions', '/v1/chat/completions'],
    ['openai', '', '/responses?x=1', '/v1/responses?x=1'],
    ['openai', '/openai', '/v1?x', '/openai/v1?x'],
    ['openai', '', '/v1beta/thing', '/v1/v1beta/thing'],
  ] as const)('%s with base %j maps %s to %s', (upstream, base, url, expected) => {
    expect(upstreamPath(upstream, base, url)).toBe(expected)
  })
})

describe('upstreamForPassthrough', () => {
  it('tells shared paths apart by the Anthropic headers', () => {
    expect(upstreamForPassthrough('/v1/models', { 'anthropic-version': '2023-06-01' })).toBe('anthropic')
    expect(upstreamForPassthrough('/v1/models', { authorization: 'Bearer x' })).toBe('openai')
    expect(upstreamForPassthrough('/v1/files', { 'x-api-key': 'k' })).toBe('anthropic')
    expect(upstreamForPassthrough('/v1/messages/batches', {})).toBe('anthropic')
    expect(upstreamForPassthrough('/embeddings', {})).toBe('openai')
  })
})
