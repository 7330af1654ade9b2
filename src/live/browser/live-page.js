// @ts-check
// The live page: keeps the sessions ctxgate reports over /ctxgate/events and draws them. Plain browser
// script (no build step); needs uPlot and token-chart.js loaded first. Writes text only (no innerHTML).
;(function (global) {
  'use strict'

  var document = global.document
  var format = global.ctxgateFormat
  var maxRequestsShown = 200
  var state = { sessions: new Map(), selected: null, pinned: false }
  var chart = null

  /** The page's element with this id; the tables it fills are looked up with `tableById`. */
  function byId(id) {
    return document.getElementById(id)
  }

  /** @returns {HTMLTableElement} */
  function tableById(id) {
    return /** @type {HTMLTableElement} */ (document.getElementById(id))
  }

  function element(tag, text, className) {
    var node = document.createElement(tag)
    if (text != null) node.textContent = text
    if (className) node.className = className
    return node
  }

  function dollars(value, unpriced) {
    if (unpriced && !value) return '—'
    if (value >= 100) return '$' + value.toFixed(0)
    if (value >= 1) return '$' + value.toFixed(2)
    return '$' + value.toFixed(3)
  }

  function percent(part, whole) {
    return format.percent(part, whole)
  }

  function promptOf(summary) {
    return summary.inputTokens + summary.cacheWrite5mTokens + summary.cacheWrite1hTokens + summary.cacheReadTokens
  }

  function ago(at) {
    var seconds = Math.max(0, Math.round((Date.now() - at) / 1000))
    if (seconds < 60) return seconds + ' s ago'
    if (seconds < 3600) return Math.round(seconds / 60) + ' min ago'
    return Math.round(seconds / 3600) + ' h ago'
  }

  function clock(at) {
    return new Date(at).toLocaleTimeString('en-GB', { hour12: false })
  }

  function ordered() {
    return Array.from(state.sessions.values()).toSorted(function (a, b) {
      return b.summary.lastSeen - a.summary.lastSeen
    })
  }

  // ---- totals across sessions -------------------------------------------------------------------

  function renderTotals(views) {
    var sum = function (pick) {
      return views.reduce(function (total, view) {
        return total + pick(view.summary)
      }, 0)
    }
    var billed = sum(function (s) {
      return s.billedTokens
    })
    var unedited = sum(function (s) {
      return s.uneditedBilledTokens
    })
    var cards = [
      ['sessions', String(views.length)],
      [
        'requests',
        format.exact(
          sum(function (s) {
            return s.requests
          }),
        ),
      ],
      ['billed-equivalent tokens', format.compact(billed)],
      [
        'billed so far',
        dollars(
          sum(function (s) {
            return s.dollars
          }),
          sum(function (s) {
            return s.unpricedRequests
          }),
        ),
      ],
      [
        'unedited (estimated)',
        format.compact(unedited) +
          ' · ' +
          dollars(
            sum(function (s) {
              return s.uneditedDollars
            }),
          ),
      ],
      ['saved by edits (est.)', unedited > 0 ? percent(unedited - billed, unedited) : '—'],
      [
        'cache-read share',
        percent(
          sum(function (s) {
            return s.cacheReadTokens
          }),
          sum(promptOf),
        ),
      ],
      [
        'refusals avoided',
        String(
          sum(function (s) {
            return s.refusalsAvoided
          }),
        ),
      ],
      [
        'compactions avoided',
        String(
          sum(function (s) {
            return s.compactionsAvoided
          }),
        ),
      ],
      [
        're-fetches',
        String(
          sum(function (s) {
            return s.refetches || 0
          }),
        ),
      ],
    ]
    var box = byId('totals')
    box.replaceChildren.apply(
      box,
      cards.map(function (card) {
        var node = element('div', null, 'card')
        node.append(element('span', card[1], 'value'), element('span', card[0], 'label'))
        return node
      }),
    )
  }

  // ---- sessions list ----------------------------------------------------------------------------

  function sessionRow(view) {
    var s = view.summary
    var row = element('tr')
    row.dataset.session = s.session
    if (s.session === state.selected) row.className = 'selected'
    var saved =
      s.uneditedBilledTokens > 0 ? percent(s.uneditedBilledTokens - s.billedTokens, s.uneditedBilledTokens) : '—'
    var cells = [
      s.client,
      s.model,
      s.session,
      format.exact(s.requests),
      ago(s.lastSeen),
      format.compact(s.billedTokens),
      dollars(s.dollars, s.unpricedRequests),
      format.compact(s.uneditedBilledTokens) + ' · ' + dollars(s.uneditedDollars, s.unpricedRequests),
      saved,
      percent(s.cacheReadTokens, promptOf(s)),
      String(s.editBatches),
      String(s.refusalsAvoided),
      String(s.compactionsAvoided),
    ]
    cells.forEach(function (text, index) {
      var cell = element('td', text)
      if (index === 2) cell.className = 'mono'
      // Same threshold as the CTXGATE_DROP_LOOP log line (session-summary.ts loopWarningDrops).
      if (index === 2 && (s.roundDrops || 0) >= 20) {
        var warning = element('span', ' ⚠ looping?', 'loop-warning')
        warning.title =
          'ctxgate dropped whole old rounds on ' + s.roundDrops + ' requests of this session: the agent may be looping'
        cell.append(warning)
      }
      if (index === 4) cell.dataset.lastSeen = String(s.lastSeen)
      row.append(cell)
    })
    row.addEventListener('click', function () {
      state.selected = s.session
      state.pinned = true
      render()
    })
    return row
  }

  function renderSessions(views) {
    var body = tableById('sessions').tBodies[0]
    body.replaceChildren.apply(body, views.map(sessionRow))
    byId('empty').hidden = views.length > 0
  }

  // ---- one session ------------------------------------------------------------------------------

  function chartRows(view) {
    var first = view.summary.requests - view.requests.length + 1
    return view.requests.map(function (event, index) {
      var usage = event.usage
      var served = event.status === 200 && usage
      return {
        n: first + index,
        read: served ? usage.cacheReadTokens : 0,
        write: served ? usage.cacheWrite5mTokens + usage.cacheWrite1hTokens : 0,
        uncached: served ? usage.inputTokens : 0,
        refused: served ? 0 : event.estimatedAfter || event.estimatedBefore || 0,
        budget: event.budget,
        window: event.window,
        mark: event.newBatch ? event.batchReason || 'edit batch' : undefined,
      }
    })
  }

  function edits(event) {
    var parts = []
    if (event.notServed) parts.push(event.notServed)
    var inBatch = function (count, total) {
      return event.newBatch && count != null && count !== total ? count + ' (' + total + ' in all)' : String(total)
    }
    if (event.folded) parts.push('folded ' + inBatch(event.batchFolded, event.folded))
    if (event.cleared) parts.push('cleared ' + inBatch(event.batchCleared, event.cleared))
    if (event.dropped) parts.push('dropped ' + event.dropped)
    if (event.tokensRemoved) parts.push('−' + format.compact(event.tokensRemoved) + ' tokens')
    if (event.newBatch) parts.push('new batch (' + (event.batchReason || 'edit') + ')')
    if (event.prefixBreak === 'client_edit') parts.push('client changed its history')
    // The provider's own reason for a cache miss, where the client asked it for one.
    var diagnosis = event.usage && event.usage.cacheDiagnosis
    if (diagnosis && diagnosis.reason !== 'none') parts.push('provider says ' + diagnosis.reason.replace(/_/g, ' '))
    if (event.refusalAvoided) parts.push('refusal avoided')
    return parts.join(', ') || '—'
  }

  function logRow(event) {
    var usage = event.usage
    var prompt = usage
      ? usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens + usage.cacheReadTokens
      : null
    var row = element('tr')
    if (event.status !== 200) row.className = 'failed'
    ;[
      clock(event.at),
      String(event.status),
      format.exact(prompt),
      usage ? format.exact(usage.cacheReadTokens) : '—',
      usage ? format.exact(usage.cacheWrite5mTokens + usage.cacheWrite1hTokens) : '—',
      usage ? format.exact(usage.inputTokens) : '—',
      usage ? format.exact(usage.outputTokens) : '—',
      event.estimatedBefore == null
        ? '—'
        : format.compact(event.estimatedBefore) + ' → ' + format.compact(event.estimatedAfter),
      edits(event),
      Math.round(event.durationMs) + ' ms',
    ].forEach(function (text) {
      row.append(element('td', text))
    })
    return row
  }

  function renderDetail(view) {
    var detail = byId('detail')
    detail.hidden = !view
    if (!view) return
    var s = view.summary
    byId('detail-title').textContent = 'Session ' + s.session
    byId('detail-facts').textContent =
      s.client +
      ' · ' +
      s.model +
      ' · ' +
      s.requests +
      ' requests since ' +
      clock(s.firstSeen) +
      (s.requests > view.requests.length ? ' (chart shows the newest ' + view.requests.length + ')' : '')
    if (!chart) chart = global.ctxgateTokenChart(byId('chart'), { height: 280 })
    chart.setRows(chartRows(view))
    var body = tableById('log').tBodies[0]
    body.replaceChildren.apply(body, view.requests.toReversed().map(logRow))
  }

  function render() {
    var views = ordered()
    if (!state.pinned || !state.sessions.has(state.selected)) {
      state.selected = views.length > 0 ? views[0].summary.session : null
      state.pinned = false
    }
    renderTotals(views)
    renderSessions(views)
    renderDetail(state.selected ? state.sessions.get(state.selected) : undefined)
  }

  // ---- the event stream -------------------------------------------------------------------------

  function setStatus(text, className) {
    var status = byId('status')
    status.textContent = text
    status.className = 'status ' + className
  }

  function onSnapshot(message) {
    var snapshot = JSON.parse(message.data)
    state.sessions = new Map()
    snapshot.sessions.forEach(function (view) {
      state.sessions.set(view.summary.session, { summary: view.summary, requests: view.requests.slice() })
    })
    render()
  }

  function onRequest(message) {
    var update = JSON.parse(message.data)
    var view = state.sessions.get(update.summary.session) || { summary: update.summary, requests: [] }
    view.summary = update.summary
    view.requests.push(update.event)
    if (view.requests.length > maxRequestsShown) view.requests.splice(0, view.requests.length - maxRequestsShown)
    state.sessions.set(update.summary.session, view)
    render()
  }

  function connect() {
    var source = new global.EventSource('events')
    source.addEventListener('snapshot', onSnapshot)
    source.addEventListener('request', onRequest)
    source.addEventListener('open', function () {
      setStatus('live', 'live')
    })
    source.addEventListener('error', function () {
      setStatus(source.readyState === 2 ? 'disconnected — reload the page' : 'reconnecting…', 'down')
    })
  }

  // "12 s ago" keeps moving between requests.
  global.setInterval(function () {
    document.querySelectorAll('td[data-last-seen]').forEach(function (/** @type {HTMLElement} */ cell) {
      cell.textContent = ago(Number(cell.dataset.lastSeen))
    })
  }, 5000)

  connect()
})(window)
