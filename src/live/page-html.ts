/** The live page's shell; live-page.js fills it from /ctxgate/events. Everything loads from /ctxgate/assets/. */
export function livePageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ctxgate — live</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/uplot.css"><link rel="stylesheet" href="assets/live-page.css">
<script defer src="assets/uplot.js"></script><script defer src="assets/token-chart.js"></script><script defer src="assets/holdout-table.js"></script><script defer src="assets/live-page.js"></script>
</head><body>
<header><h1>ctxgate <span>live</span></h1><span id="status" class="status">connecting…</span></header>
<main>
<section id="totals" class="totals" aria-label="totals"></section>
<section id="holdout" hidden><h2>Holdout: ctxgate against sessions forwarded as sent</h2><p id="holdout-note" class="notes"></p>
<div class="table-wrap"><table id="holdout-table"><thead><tr><th>kind (models)</th><th>arm</th><th>finished sessions</th><th title="billed-equivalent input of the median session, with a distribution-free 95% interval">median billed input (95%)</th><th>median requests</th><th>median duration</th><th>median cache read</th><th title="ctxgate's own length refusals · 4xx answers · client compactions, summed">refusals · 4xx · compactions</th><th>saving per session</th></tr></thead><tbody></tbody></table></div></section>
<h2>Sessions</h2>
<div class="table-wrap"><table id="sessions"><thead><tr>
<th>client</th><th>model</th><th>session</th><th>requests</th><th>last seen</th><th title="input + 1.25 × 5m write + 2 × 1h write + 0.1 × cache read">billed tokens</th><th>billed $</th><th title="ctxgate's estimate of the prompt before edits ÷ after, applied to what was billed">unedited (est.)</th><th title="1 − billed ÷ the unedited estimate: an estimate too (docs/counterfactuals.md)">saved (est.)</th><th>cache read</th><th>edit batches</th><th>refusals avoided</th><th>compactions avoided</th>
</tr></thead><tbody></tbody></table></div>
<p id="empty" class="empty">No requests yet. Point an agent's base URL at this ctxgate and its sessions appear here as they run.</p>
<section id="detail" hidden>
<h2 id="detail-title"></h2><p id="detail-facts" class="notes"></p>
<div id="chart" class="chart" role="img" aria-label="prompt tokens per request"></div>
<h3>Requests (newest first)</h3>
<div class="table-wrap"><table id="log"><thead><tr><th>time</th><th>status</th><th>prompt</th><th>cache read</th><th>cache write</th><th>uncached</th><th>output</th><th>est. before → after</th><th>edits</th><th>duration</th></tr></thead><tbody></tbody></table></div>
</section>
${numbersExplained}
</main></body></html>
`
}

const numbersExplained = `<footer><h2>What the numbers mean</h2><dl>
<dt>billed tokens</dt><dd>Billed-equivalent input: uncached input + 1.25 × 5-minute cache writes + 2 × 1-hour cache writes + 0.1 × cache reads, as the upstream reported them. One number that prices a prompt the way the provider bills it.</dd>
<dt>billed $</dt><dd>The same usage, output included, at list price per model family (Opus, Sonnet, Haiku, GPT-5, GPT-4.1, GPT-4o); "—" for models without a price.</dd>
<dt>unedited (est.)</dt><dd>What the session would have cost without ctxgate. For Claude Code, Codex and opencode: the client as it would have run, compacting where its own rule says, the compaction request and its smaller prefix billed (docs/counterfactuals.md). For other clients: each request's bill scaled by ctxgate's estimate of the prompt before edits ÷ after, as if the client never compacted — an estimate that overstates the saving for a client that compacts. The holdout (docs/holdout.md) measures instead.</dd>
<dt>cache read</dt><dd>Share of prompt tokens read from the provider's cache.</dd>
<dt>edit batches</dt><dd>Requests on which ctxgate decided new edits (fold, clear, drop); each breaks the cache prefix once and is marked ✂ on the chart with its reason.</dd>
<dt>refusals avoided</dt><dd>Requests that, as the client sent them, would not have fit the model's window, and that ctxgate served.</dd>
<dt>re-fetches</dt><dd>Tool calls that fetched again what ctxgate had cleared or folded (the same tool and input, or a read of the same file, within 20 requests). Agents repeat some calls even with their whole context, so compare with docs/quality.md's baseline, not with zero.</dd>
<dt>compactions avoided</dt><dd>Compactions the client would have made by its own rule without ctxgate and did not make behind it (Claude Code, Codex, opencode); for other clients, times the unedited prompt crossed window − 33,000 tokens while what ctxgate sent stayed below.</dd>
</dl></footer>`

/** Asks for the admin token; it is exchanged for a cookie that opens this page only. */
export function loginPageHtml(message: string | undefined): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ctxgate — sign in</title><link rel="icon" href="data:,"><link rel="stylesheet" href="assets/live-page.css"></head>
<body><form class="login" method="post" action="login">
<h1>ctxgate live</h1><p>This page needs the admin token (<code>CTXGATE_ADMIN_TOKEN</code>).</p>
${message ? `<p class="error">${message}</p>` : ''}
<label>Admin token <input type="password" name="token" autocomplete="current-password" autofocus required></label>
<button type="submit">Open</button></form></body></html>
`
}
