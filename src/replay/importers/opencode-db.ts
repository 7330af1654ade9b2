import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import initSqlJs, { type Database } from 'sql.js'
import { ImportError } from './import-error.ts'
import type { OpencodeMessage, OpencodeSession } from './opencode-session.ts'

type Json = Record<string, unknown>

const sqliteMagic = 'SQLite format 3\u0000'

export function isSqliteFile(head: Buffer): boolean {
  return head.subarray(0, sqliteMagic.length).toString('latin1') === sqliteMagic
}

/** Which sessions of the database to read: one by id, the newest, or every top-level one. */
export type SessionPick = { readonly id: string } | 'latest' | 'all'

/**
 * Reads sessions from opencode's SQLite store (opencode 1.2 and later: `session`, `message` and
 * `part` tables, each row's `data` a JSON document) with sql.js, a WebAssembly build of SQLite.
 */
export async function readOpencodeDatabase(
  path: string,
  pick: SessionPick,
): Promise<{ sessions: OpencodeSession[]; notes: string[] }> {
  const database = await open(path)
  try {
    const tables = new Set(
      rows(database, "SELECT name FROM sqlite_master WHERE type = 'table'").map((row) => row['name']),
    )
    for (const table of ['session', 'message', 'part'])
      if (!tables.has(table))
        throw new ImportError(path, `a SQLite file without opencode's ${table} table (not an opencode.db?)`)
    const sessions = chosenSessions(database, pick, path)
    const notes = walNote(path)
    return { sessions: sessions.map((info) => withMessages(database, info)), notes }
  } finally {
    database.close()
  }
}

async function open(path: string): Promise<Database> {
  // sql.js finds its .wasm beside its own script; resolve it from the installed package.
  const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm')
  const SQL = await initSqlJs({ locateFile: () => wasm })
  return new SQL.Database(readFileSync(path))
}

function rows(database: Database, sql: string, params: (string | number)[] = []): Json[] {
  const statement = database.prepare(sql)
  statement.bind(params)
  const out: Json[] = []
  while (statement.step()) out.push(statement.getAsObject() as Json)
  statement.free()
  return out
}

function chosenSessions(database: Database, pick: SessionPick, path: string): Json[] {
  const columns = 'id, parent_id, title, directory, version, time_created'
  if (typeof pick === 'object') {
    const found = rows(database, `SELECT ${columns} FROM session WHERE id = ?`, [pick.id])
    if (found.length === 0) throw new ImportError(path, `no opencode session ${pick.id} in this database`)
    return found
  }
  const topLevel = rows(database, `SELECT ${columns} FROM session WHERE parent_id IS NULL ORDER BY time_created`)
  if (topLevel.length === 0) throw new ImportError(path, 'the opencode database holds no sessions')
  return pick === 'latest' ? topLevel.slice(-1) : topLevel
}

function withMessages(database: Database, session: Json): OpencodeSession {
  const id = String(session['id'])
  const parts = new Map<string, Json[]>()
  for (const row of rows(database, 'SELECT message_id, data FROM part WHERE session_id = ? ORDER BY id', [id])) {
    const list = parts.get(String(row['message_id'])) ?? []
    list.push(JSON.parse(String(row['data'])) as Json)
    parts.set(String(row['message_id']), list)
  }
  const messages: OpencodeMessage[] = rows(
    database,
    'SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id',
    [id],
  ).map((row) => ({
    info: { id: row['id'], ...(JSON.parse(String(row['data'])) as Json) },
    parts: parts.get(String(row['id'])) ?? [],
  }))
  return { info: { ...session, id }, messages }
}

/** sql.js reads the main file only: pages still in the write-ahead log are not seen. */
function walNote(path: string): string[] {
  const wal = `${path}-wal`
  if (!existsSync(wal) || statSync(wal).size <= 32) return []
  return [`${wal} exists: while opencode runs, its newest messages may be there and not yet read`]
}
