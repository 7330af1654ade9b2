/** Whether a JSON number literal survives JSON.parse: a double holds exactly the value it names. */

/** Whether a double holds the literal's value, so writing the double back names the same number. */
export function exactAsDouble(literal: string): boolean {
  const value = Number(literal)
  if (!Number.isFinite(value)) return false
  const written = significant(literal)
  if (value === 0) return written.digits === ''
  // Up to 15 significant digits always survive a double; beyond, compare with what the double writes back.
  if (written.digits.length <= 15) return true
  const back = significant(String(value))
  return back.digits === written.digits && back.exponent === written.exponent
}

/** The significant digits without leading or trailing zeros, and the power of ten of the first one. */
function significant(literal: string): { digits: string; exponent: number } {
  const match = /^-?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal)
  if (!match) return { digits: literal, exponent: 0 }
  const whole = match[1] ?? ''
  const fraction = match[2] ?? ''
  const all = whole + fraction
  const leading = all.length - all.replace(/^0+/, '').length
  const digits = all.slice(leading).replace(/0+$/, '')
  return { digits, exponent: whole.length - leading - 1 + Number(match[3] ?? 0) }
}
