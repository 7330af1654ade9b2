import { existsSync, readdirSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, join } from 'node:path'
import { ImportError } from './import-error.ts'
import type { SessionPick } from './opencode-db.ts'

export const agents = ['claude-code', 'codex', 'opencode', 'gemini-cli'] as const
export type Agent = (typeof agents)[number]

/** One recording to read, found in an agent's own folder. */
export interface FoundRecording {
  readonly path: string
  readonly session?: SessionPick
}

type Env = NodeJS.ProcessEnv

/**
 * Where each agent keeps its sessions by default: Codex under $CODEX_HOME/sessions, opencode in
 * $XDG_DATA_HOME/opencode/opencode.db, Gemini CLI under ~/.gemini/tmp/<project>/chats, Claude Code
 * under $CLAUDE_CONFIG_DIR/projects (each agent's own docs; see docs/clients/).
 */
function folders(env: Env): Record<Agent, string> {
  const home = env['HOME'] ?? homedir()
  return {
    'claude-code': join(env['CLAUDE_CONFIG_DIR'] ?? join(home, '.claude'), 'projects'),
    codex: join(env['CODEX_HOME'] ?? join(home, '.codex'), 'sessions'),
    opencode: join(env['XDG_DATA_HOME'] ?? join(home, '.local', 'share'), 'opencode', 'opencode.db'),
    'gemini-cli': join(env['GEMINI_CLI_HOME'] ?? home, '.gemini', 'tmp'),
  }
}

const sessionFile: Record<Exclude<Agent, 'opencode'>, RegExp> = {
  'claude-code': /^[\w-]+\.jsonl$/,
  codex: /^rollout-.*\.jsonl(\.zst)?$/,
  'gemini-cli': /^session-.*\.jsonl$/,
}

export function parseAgent(name: string): Agent {
  if ((agents as readonly string[]).includes(name)) return name as Agent
  throw new ImportError(name, `unknown agent: expected one of ${agents.join(', ')}`)
}

/** The agent's newest session. */
export function latestRecording(agent: Agent, env: Env = process.env): FoundRecording {
  const where = folders(env)[agent]
  if (agent === 'opencode') return { path: existing(where), session: 'latest' }
  const newest = sessionFiles(agent, where).toSorted((a, b) => b.mtime - a.mtime)[0]
  if (!newest) throw new ImportError(where, `no ${agent} session found here`)
  return { path: newest.path }
}

/** A session by id: in the named agent's folder, or in each agent's folder in turn. */
export function recordingById(id: string, agent: Agent | undefined, env: Env = process.env): FoundRecording {
  for (const candidate of agent ? [agent] : agents) {
    const where = folders(env)[candidate]
    if (candidate === 'opencode') {
      if ((agent === 'opencode' || id.startsWith('ses_')) && existsSync(where)) return { path: where, session: { id } }
      continue
    }
    const match = sessionFiles(candidate, where).find((file) => matchesId(basename(file.path), id))
    if (match) return { path: match.path }
  }
  throw new ImportError(id, `no session with this id in ${agent ? `${agent}'s folder` : "any agent's default folder"}`)
}

/** Codex and Claude Code put the whole id in the file name; Gemini CLI its first eight characters. */
function matchesId(name: string, id: string): boolean {
  return name.includes(id) || (name.startsWith('session-') && id.length >= 8 && name.includes(id.slice(0, 8)))
}

function existing(path: string): string {
  if (!existsSync(path)) throw new ImportError(path, 'not found (is the agent installed and has it run here?)')
  return path
}

function sessionFiles(agent: Exclude<Agent, 'opencode'>, root: string): { path: string; mtime: number }[] {
  if (!existsSync(root)) return []
  const found: { path: string; mtime: number }[] = []
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      // Claude Code's sub-agents live in SESSION/subagents; they are not sessions of their own.
      if (entry.isDirectory() && depth < 4 && entry.name !== 'subagents') walk(path, depth + 1)
      else if (entry.isFile() && sessionFile[agent].test(entry.name))
        found.push({ path, mtime: statSync(path).mtimeMs })
    }
  }
  walk(root, 0)
  return found
}
