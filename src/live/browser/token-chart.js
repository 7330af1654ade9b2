// @ts-check
// Prompt tokens per request as stacked bars (cache read / cache write / uncached), with the budget and the
// window as lines and ctxgate's edit batches marked. Shared by the live page and `ctxgate replay --html`.
// Plain browser script (no build step): it defines window.ctxgateTokenChart and needs uPlot loaded first.
;(function (global) {
  'use strict'

  var colours = {
    read: '#3b82f6',
    write: '#f59e0b',
    uncached: '#9ca3af',
    refused: '#dc2626',
    budget: '#16a34a',
    window: '#111827',
    mark: '#7c3aed',
  }

  /** 1234 → "1.2k", 2500000 → "2.5M": short enough for an axis. */
  function compact(value) {
    if (value == null) return '—'
    var abs = Math.abs(value)
    if (abs >= 1e6) return (value / 1e6).toFixed(abs >= 1e7 ? 0 : 1) + 'M'
    if (abs >= 1e3) return (value / 1e3).toFixed(abs >= 1e4 ? 0 : 1) + 'k'
    return String(Math.round(value))
  }

  function exact(value) {
    return value == null ? '—' : Math.round(value).toLocaleString('en-US')
  }

  /**
   * part ÷ whole as a percentage, signed: a share under 0.05% gets two decimals, so a session that
   * cost slightly more than its counterfactual reads "-0.03%", never "-0.0%"; one that rounds to
   * nothing reads "0.0%", whatever its sign.
   */
  function percent(part, whole) {
    if (!(whole > 0)) return '—'
    var value = (part / whole) * 100
    var text = value.toFixed(Math.abs(value) < 0.05 ? 2 : 1)
    return (/^-?0\.0+$/.test(text) ? '0.0' : text) + '%'
  }

  /**
   * rows: [{ n, read, write, uncached, refused, budget, window, mark }] — n is the request number,
   * refused the size of a request that was not served (drawn red), mark the reason of an edit batch.
   */
  function columns(rows) {
    var data = [[], [], [], [], [], [], []]
    rows.forEach(function (row) {
      var read = row.read || 0
      var write = row.write || 0
      var uncached = row.uncached || 0
      var served = read + write + uncached > 0
      data[0].push(row.n)
      // Bars overlap from the back: each series is drawn to its running total so the stack reads bottom-up.
      data[1].push(served ? read + write + uncached : null)
      data[2].push(served ? read + write : null)
      data[3].push(served ? read : null)
      data[4].push(row.refused ? row.refused : null)
      data[5].push(row.budget == null ? null : row.budget)
      data[6].push(row.window == null ? null : row.window)
    })
    return data
  }

  // A line needs two points; with fewer requests the values are drawn as dots.
  function fewPoints(u) {
    return u.data[0].length < 3
  }

  // Request numbers are whole: ticks only on integers inside the shown range.
  function integerSplits(_u, _axisIdx, min, max, increment) {
    var splits = []
    var step = Math.max(1, Math.round(increment))
    for (var value = Math.ceil(min / step) * step; value <= max; value += step) if (value >= 1) splits.push(value)
    return splits
  }

  function tokenChart(container, options) {
    options = options || {}
    var rows = []
    var drawnRequests = new Set()
    var uPlot = global.uPlot
    var bars = uPlot.paths.bars({
      size: [0.72, 48],
      gap: 1,
      // Called for every bar put on the canvas (however thin at this scale): the test hook counts them.
      each: function (_u, _seriesIdx, index) {
        drawnRequests.add(index)
      },
    })
    var stepped = uPlot.paths.stepped({ align: 1 })
    function raw(key) {
      return function (_u, _value, _seriesIdx, index) {
        var row = index == null ? undefined : rows[index]
        return row ? exact(row[key]) : '—'
      }
    }
    function barSeries(label, colour, key) {
      return {
        label: label,
        fill: colour,
        stroke: colour,
        width: 0,
        paths: bars,
        points: { show: false },
        value: raw(key),
      }
    }
    function lineSeries(label, colour, dash, key) {
      return {
        label: label,
        stroke: colour,
        width: 1.5,
        dash: dash,
        paths: stepped,
        points: { show: fewPoints, size: 6, fill: colour },
        value: raw(key),
      }
    }

    // Label lanes below the top of the plot: a label goes in the first lane where it overlaps nothing.
    var labelLanes = 3

    function drawMarks(u) {
      var ctx = u.ctx
      var pixel = global.devicePixelRatio || 1
      var lanes = []
      for (var lane = 0; lane < labelLanes; lane++) lanes.push(-Infinity)
      var placed = []
      var plotLeft = u.bbox.left
      var plotRight = u.bbox.left + u.bbox.width
      ctx.save()
      ctx.font = 11 * pixel + 'px system-ui, sans-serif'
      // uPlot leaves the context centred from drawing its axes: a label measured from its left edge must be drawn from it.
      ctx.textAlign = 'left'
      ctx.textBaseline = 'alphabetic'
      rows.forEach(function (row, index) {
        if (!row.mark) return
        var step = rows.length > 1 ? u.valToPos(u.data[0][1], 'x', true) - u.valToPos(u.data[0][0], 'x', true) : 0
        var x = Math.round(u.valToPos(u.data[0][index], 'x', true) - step / 2)
        ctx.strokeStyle = colours.mark
        ctx.lineWidth = pixel
        ctx.setLineDash([4 * pixel, 3 * pixel])
        ctx.beginPath()
        ctx.moveTo(x, u.bbox.top)
        ctx.lineTo(x, u.bbox.top + u.bbox.height)
        ctx.stroke()
        var text = '✂ ' + row.mark
        var boxWidth = ctx.measureText(text).width + 6 * pixel
        // Right of its line, or left of it near the right edge; never over the y-axis or past the plot.
        var left = x + boxWidth + 4 * pixel > plotRight ? x - boxWidth - 2 * pixel : x + 2 * pixel
        left = Math.max(plotLeft + pixel, Math.min(left, plotRight - boxWidth - pixel))
        var free = lanes.findIndex(function (end) {
          return left > end + 4 * pixel
        })
        // No lane has room: the batch keeps its line, and its reason is in the log below.
        if (free === -1) return
        lanes[free] = left + boxWidth
        var top = u.bbox.top + (4 + free * 18) * pixel
        ctx.fillStyle = 'rgba(255,255,255,0.9)'
        ctx.fillRect(left, top, boxWidth, 15 * pixel)
        ctx.fillStyle = colours.mark
        ctx.fillText(text, left + 3 * pixel, top + 11 * pixel)
        placed.push({
          text: text,
          left: left / pixel,
          right: (left + boxWidth) / pixel,
          top: top / pixel,
          bottom: (top + 15 * pixel) / pixel,
        })
      })
      ctx.restore()
      // For tests and screen readers: what was labelled, and where (CSS pixels in the canvas).
      container.dataset.labels = JSON.stringify(placed)
      container.dataset.plotLeft = String(plotLeft / pixel)
    }

    var plot = new uPlot(
      {
        width: Math.max(320, container.clientWidth || options.width || 900),
        height: options.height || 260,
        title: options.title,
        legend: { live: true },
        cursor: { points: { show: false }, drag: { x: false, y: false } },
        scales: {
          x: {
            time: false,
            range: function (_u, min, max) {
              return [(min == null ? 1 : min) - 0.5, (max == null ? 1 : max) + 0.5]
            },
          },
          y: {
            range: function (_u, _min, max) {
              var top = Math.max(options.yMax || 0, max || 0, 1)
              return [0, top * 1.08]
            },
          },
        },
        axes: [
          {
            label: 'request',
            size: 36,
            space: 40,
            incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
            splits: integerSplits,
          },
          {
            label: options.yLabel || 'prompt tokens per request',
            size: 58,
            values: function (_u, splits) {
              return splits.map(compact)
            },
          },
        ],
        series: [
          {
            label: 'request',
            value: function (_u, v) {
              return v == null ? '—' : '#' + v
            },
          },
          barSeries('uncached', colours.uncached, 'uncached'),
          barSeries('cache write', colours.write, 'write'),
          barSeries('cache read', colours.read, 'read'),
          barSeries(options.refusedLabel || 'not served', colours.refused, 'refused'),
          lineSeries('budget', colours.budget, [6, 4], 'budget'),
          lineSeries('window', colours.window, [2, 3], 'window'),
        ],
        hooks: {
          draw: [
            function (u) {
              drawMarks(u)
              container.dataset.drawnBars = String(drawnRequests.size)
              container.dataset.requests = String(rows.length)
            },
          ],
        },
      },
      columns([]),
      container,
    )

    if (global.ResizeObserver) {
      new global.ResizeObserver(function () {
        var width = Math.max(320, container.clientWidth)
        if (Math.abs(width - plot.width) > 2) {
          drawnRequests.clear()
          plot.setSize({ width: width, height: plot.height })
        }
      }).observe(container)
    }

    return {
      /** Replaces every row; paths are rebuilt, so the drawn-bar count starts again. */
      setRows: function (next) {
        rows = next.slice()
        drawnRequests.clear()
        plot.setData(columns(rows))
      },
      plot: plot,
    }
  }

  global.ctxgateTokenChart = tokenChart
  global.ctxgateFormat = { compact: compact, exact: exact, percent: percent }
})(window)
