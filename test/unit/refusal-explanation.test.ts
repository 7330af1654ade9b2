import { describe, expect, it } from 'vitest'
import { explainPromptRoom, type PromptRoom } from '../../src/forward/rewrite-hook/refusal-explanation.ts'

const claudeAt64k: PromptRoom = {
  window: 64_000,
  maxOutputTokens: 32_000,
  configuredBudget: 57_600,
  budget: 32_000,
  client: 'Claude Code',
  outputField: 'max_tokens',
}

describe('the arithmetic of a refusal', () => {
  it('Claude Code at a 64k window: max_tokens binds, and its variable is named', () => {
    const text = explainPromptRoom(claudeAt64k)
    expect(text).toContain(
      "The model's window is 64,000 tokens and this request reserves max_tokens 32,000 of it for the answer, leaving 32,000 for the prompt.",
    )
    expect(text).toContain('Room for the prompt: 32,000.')
    expect(text).toContain('CLAUDE_CODE_MAX_OUTPUT_TOKENS')
    expect(text).not.toContain('models[].budget')
  })

  it('a configured budget below what max_tokens leaves: the config is what to raise', () => {
    const text = explainPromptRoom({ ...claudeAt64k, maxOutputTokens: 4_000, configuredBudget: 20_000, budget: 20_000 })
    expect(text).toContain("ctxgate's configured budget for this model (models[].budget) is 20,000.")
    expect(text).toContain("raise models[].budget in ctxgate's config")
    expect(text).not.toContain('CLAUDE_CODE_MAX_OUTPUT_TOKENS')
  })

  it('a limit the upstream named: said, and no advice about settings that would not help', () => {
    const text = explainPromptRoom({
      ...claudeAt64k,
      window: 200_000,
      maxOutputTokens: 8_000,
      configuredBudget: 180_000,
      learnedLimit: 100_000,
      budget: 89_000,
    })
    expect(text).toContain('The upstream said earlier that its limit is 100,000.')
    expect(text).not.toContain('To give the prompt more room')
  })

  it('another client: no Claude Code variable', () => {
    expect(explainPromptRoom({ ...claudeAt64k, client: 'OpenAI SDK (JS)' })).not.toContain('CLAUDE_CODE')
  })
})
