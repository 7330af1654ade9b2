/** Model-name globs, as the config's `models` and `economy.prices` entries match them. */

const compiled = new Map<string, RegExp>()

/** `*` any run, `?` one character, `[...]` a class; everything else literal. */
export function globToRegExp(glob: string): RegExp {
  let pattern = compiled.get(glob)
  if (pattern) return pattern
  let source = ''
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string
    if (char === '*') source += '.*'
    else if (char === '?') source += '.'
    else if (char === '[') {
      const end = glob.indexOf(']', index + 1)
      if (end === -1) source += '\\['
      else {
        source += `[${glob.slice(index + 1, end).replace(/\\/g, '\\\\')}]`
        index = end
      }
    } else source += char.replace(/[.+^${}()|\\\]]/g, '\\$&')
  }
  pattern = new RegExp(`^${source}$`)
  compiled.set(glob, pattern)
  return pattern
}
