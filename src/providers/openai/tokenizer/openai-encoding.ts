/**
 * Which public BPE vocabulary an OpenAI model counts its prompt in, from its name, as OpenAI's
 * tiktoken maps them (github.com/openai/tiktoken, tiktoken/model.py): o200k_base for GPT-4o, 4.1,
 * 4.5, GPT-5, the o-series, Codex models and gpt-oss (o200k_harmony adds only special tokens);
 * cl100k_base for GPT-4 and GPT-3.5. Anything else (Claude, Gemini, unknown names) has no offline
 * exact count.
 */
export type OpenAIEncoding = 'o200k_base' | 'cl100k_base'

const o200k = /^(?:gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-4o|codex-|o[134](?:$|-)|gpt-realtime|gpt-audio)/
const cl100k = /^(?:gpt-4(?:$|-)|gpt-3\.5-turbo|gpt-35-turbo)/

export function openaiEncodingOf(model: string): OpenAIEncoding | undefined {
  // Provider-prefixed names (openai/gpt-5, azure deployments) count like the bare model.
  const name = model.toLowerCase().replace(/^openai\//, '')
  if (o200k.test(name)) return 'o200k_base'
  if (cl100k.test(name)) return 'cl100k_base'
  return undefined
}
