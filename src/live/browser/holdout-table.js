// @ts-check
// The live page's holdout table: both arms of each session kind, read from /ctxgate/holdout. Plain
// browser script (no build step), needs token-chart.js loaded first. Writes text only (no innerHTML).
;(function (global) {
  'use strict'

  var document = global.document
  var format = global.ctxgateFormat

  function element(tag, text, className) {
    var node = document.createElement(tag)
    if (text != null) node.textContent = text
    if (className) node.className = className
    return node
  }

  function holdoutRow(kind, arm, first) {
    var a = kind[arm]
    var row = element('tr')
    var interval = a.billedInterval
      ? ' (' + format.compact(a.billedInterval[0]) + '–' + format.compact(a.billedInterval[1]) + ')'
      : ''
    var cells = [
      first ? kind.kind + ' (' + kind.models.join(', ') + ')' : '',
      arm,
      String(a.sessions),
      a.medianBilledTokens == null ? '—' : format.compact(a.medianBilledTokens) + interval,
      a.medianRequests == null ? '—' : format.exact(a.medianRequests),
      a.medianDurationSeconds == null ? '—' : Math.round(a.medianDurationSeconds) + ' s',
      a.medianCacheReadShare == null ? '—' : (a.medianCacheReadShare * 100).toFixed(1) + '%',
      a.lengthRefusals + ' · ' + a.clientErrors + ' · ' + a.clientCompactions,
    ]
    cells.forEach(function (text) {
      row.append(element('td', text))
    })
    if (first) {
      var verdict = element('td', kind.verdict, 'verdict')
      verdict.rowSpan = 2
      row.append(verdict)
    }
    return row
  }

  function renderHoldout(kinds) {
    var section = document.getElementById('holdout')
    section.hidden = kinds.length === 0
    var rows = []
    kinds.forEach(function (kind) {
      rows.push(holdoutRow(kind, 'control', true), holdoutRow(kind, 'treated', false))
    })
    var body = /** @type {HTMLTableElement} */ (document.getElementById('holdout-table')).tBodies[0]
    body.replaceChildren.apply(body, rows)
    var unmetered = kinds.reduce(function (sum, kind) {
      return sum + kind.unmetered
    }, 0)
    document.getElementById('holdout-note').textContent =
      'Finished sessions only, compared per session kind; control sessions were forwarded exactly as sent.' +
      (unmetered > 0 ? ' ' + unmetered + ' session(s) left out: an answer carried no usage.' : '')
  }

  function pollHoldout() {
    global
      .fetch('holdout', { credentials: 'same-origin' })
      .then(function (response) {
        return response.ok ? response.json() : { holdout: [] }
      })
      .then(function (body) {
        renderHoldout(body.holdout || [])
      })
      .catch(function () {})
  }

  pollHoldout()
  // Sessions enter the comparison when they finish (idle), not on a request: polled, not pushed.
  global.setInterval(pollHoldout, 15000)
})(window)
