import type { MockAnswer } from './types.ts'

/** Models the mock lists; it answers for any model name, these are only what a models call shows. */
const anthropicModels = [
  ['claude-mock-1', 'Mock'],
  ['claude-sonnet-4-5', 'Claude Sonnet 4.5'],
  ['claude-opus-4-5', 'Claude Opus 4.5'],
  ['claude-haiku-4-5', 'Claude Haiku 4.5'],
] as const
const openaiModels = ['gpt-mock-1', 'gpt-5', 'gpt-5-mini', 'text-embedding-3-small', 'text-embedding-3-large'] as const

const anthropicModel = ([id, name]: readonly [string, string]) => ({
  type: 'model',
  id,
  display_name: name,
  created_at: '2026-01-01T00:00:00Z',
})
const openaiModel = (id: string) => ({ id, object: 'model', created: 1_767_225_600, owned_by: 'ctxgate' })

type Provider = 'anthropic' | 'openai'

/** `GET /v1/models` and `GET /v1/models/{id}` (also without `/v1`), or undefined for any other route. */
export function answerModels(method: string, path: string, provider: Provider): MockAnswer | undefined {
  if (method !== 'GET') return undefined
  if (path === '/v1/models' || path === '/models') return listModels(provider)
  const id = /^(?:\/v1)?\/models\/([^/]+)$/.exec(path)?.[1]
  return id === undefined ? undefined : findModel(provider, decodeURIComponent(id))
}

/** `GET /v1/models` in the shape of the provider that asked. */
function listModels(provider: Provider): MockAnswer {
  if (provider === 'openai') return { status: 200, json: { object: 'list', data: openaiModels.map(openaiModel) } }
  const data = anthropicModels.map(anthropicModel)
  return {
    status: 200,
    json: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null },
  }
}

/** `GET /v1/models/{id}`: one listed model, or undefined for a 404. */
function findModel(provider: Provider, id: string): MockAnswer | undefined {
  if (provider === 'openai') {
    const known = openaiModels.find((model) => model === id)
    return known ? { status: 200, json: openaiModel(known) } : undefined
  }
  const known = anthropicModels.find(([model]) => model === id)
  return known ? { status: 200, json: anthropicModel(known) } : undefined
}
