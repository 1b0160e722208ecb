/*
 * The live page's text: HTML, a stylesheet, Chart.js (common/chartjs.c:
 * Debian's libjs-chart.js, read at run time) and the page's own script,
 * joined once when the server starts. The script fetches /live.json every
 * second (the first time all samples, then ?since= the newest it has),
 * keeps at most 900 samples, turns counters into per-second rates and
 * redraws six charts without animation. After each update it writes, into
 * the hidden element #live-summary, the number of points each chart drew
 * and its latest values, so that a test reading the DOM sees what was drawn.
 */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chartjs.h"
#include "sbuf.h"

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>fleetsim live</title>\n<link rel=\"icon\" href=\"data:,\">\n"
    "<style>\n"
    "body{font-family:sans-serif;margin:12px;background:#fafafa;color:#222}\n"
    "h1{font-size:20px;margin:0 0 4px}\n"
    "#status{font-size:13px;color:#666;margin-bottom:8px}\n"
    "#totals{display:flex;flex-wrap:wrap;gap:6px;margin-bottom:10px}\n"
    ".t{background:#fff;border:1px solid #ddd;border-radius:4px;padding:4px 8px;font-size:13px}\n"
    ".t b{display:block;font-size:17px}\n"
    "#charts{display:grid;grid-template-columns:1fr 1fr;gap:10px}\n"
    ".c{background:#fff;border:1px solid #ddd;border-radius:4px;padding:6px;height:230px;position:relative}\n"
    ".c h2{font-size:14px;margin:0 0 2px}\n"
    ".c div{position:relative;height:200px}\n"
    "</style></head><body>\n"
    "<h1>fleetsim: the fleet as it runs</h1>\n"
    "<div id=\"status\">loading&hellip;</div>\n"
    "<div id=\"totals\"></div>\n"
    "<div id=\"charts\">\n"
    "<div class=\"c\"><h2>Devices by group and state</h2><div><canvas id=\"c-states\"></canvas></div></div>\n"
    "<div class=\"c\"><h2>NETCONF sessions by transport</h2><div><canvas "
    "id=\"c-sessions\"></canvas></div></div>\n"
    "<div class=\"c\"><h2>NETCONF RPCs per second</h2><div><canvas id=\"c-rpcs\"></canvas></div></div>\n"
    "<div class=\"c\"><h2>SNMP requests per second</h2><div><canvas id=\"c-snmp\"></canvas></div></div>\n"
    "<div class=\"c\"><h2>Notifications per second</h2><div><canvas id=\"c-notif\"></canvas></div></div>\n"
    "<div class=\"c\"><h2>Auth failures and drops per second</h2><div><canvas "
    "id=\"c-fail\"></canvas></div></div>\n"
    "</div>\n"
    "<pre id=\"live-summary\" hidden></pre>\n"
    "<script>\n";

static const char page_script[] =
    "</script>\n<script>\n"
    "'use strict';\n"
    "(function () {\n"
    "const KEEP = 900, PERIOD_MS = 1000;\n"
    "let seq = 0, rows = [], cols = null, updates = 0;\n"
    "const $ = (id) => document.getElementById(id);\n"
    "Chart.defaults.animation = false;\n"
    "Chart.defaults.font.size = 11;\n"
    "const colors = ['#1f77b4', '#d62728', '#ff7f0e', '#7f7f7f', '#2ca02c', '#9467bd'];\n"
    "function line(id, names) {\n"
    "  return new Chart($(id), {type: 'line',\n"
    "    data: {datasets: names.map((n, i) => ({label: n, data: [], borderColor: colors[i],\n"
    "      backgroundColor: colors[i], borderWidth: 1.5, pointRadius: 0, tension: 0}))},\n"
    "    options: {responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,\n"
    "      interaction: {mode: 'nearest', axis: 'x', intersect: false},\n"
    "      scales: {x: {type: 'linear', min: -KEEP, max: 0,\n"
    "        title: {display: true, text: 'seconds ago'}, ticks: {callback: (v) => -v}},\n"
    "        y: {beginAtZero: true}}}});\n"
    "}\n"
    "const charts = {\n"
    "  states: new Chart($('c-states'), {type: 'bar',\n"
    "    data: {labels: [], datasets: ['up', 'down', 'rebooting', 'absent'].map((n, i) =>\n"
    "      ({label: n, data: [], backgroundColor: ['#2ca02c', '#d62728', '#ff7f0e', '#bbbbbb'][i]}))},\n"
    "    options: {responsive: true, maintainAspectRatio: false, indexAxis: 'y',\n"
    "      scales: {x: {stacked: true, beginAtZero: true}, y: {stacked: true}}}}),\n"
    "  sessions: line('c-sessions', ['tcp', 'ssh', 'tls']),\n"
    "  rpcs: line('c-rpcs', ['rpcs/s', 'rpc errors/s']),\n"
    "  snmp: line('c-snmp', ['requests/s']),\n"
    "  notif: line('c-notif', ['NETCONF notifications/s', 'SNMP traps/s']),\n"
    "  fail: line('c-fail', ['auth failures/s', 'session drops/s', 'notification drops/s', 'SNMP drops/s'])\n"
    "};\n"
    "/* Which columns each line chart draws; a rate unless marked as a gauge. */\n"
    "const series = {sessions: {gauge: true, cols: ['sessions_tcp', 'sessions_ssh', 'sessions_tls']},\n"
    "  rpcs: {cols: ['rpcs', 'rpc_errors']}, snmp: {cols: ['snmp_requests']},\n"
    "  notif: {cols: ['notifications', 'traps']},\n"
    "  fail: {cols: ['auth_failures', 'session_drops', 'notif_drops', 'snmp_drops']}};\n"
    "function col(name) { return cols.indexOf(name); }\n"
    "function redraw(j) {\n"
    "  const summary = {updates: updates, seq: seq, samples: rows.length, charts: {}, now: j.now};\n"
    "  const tLast = rows.length ? rows[rows.length - 1][col('t_ms')] : 0;\n"
    "  for (const name in series) {\n"
    "    const s = series[name], ch = charts[name], ti = col('t_ms');\n"
    "    const latest = [];\n"
    "    s.cols.forEach((c, k) => {\n"
    "      const ci = col(c), pts = [];\n"
    "      for (let i = s.gauge ? 0 : 1; i < rows.length; i++) {\n"
    "        const x = (rows[i][ti] - tLast) / 1000;\n"
    "        if (s.gauge) { pts.push({x: x, y: rows[i][ci]}); continue; }\n"
    "        const dt = (rows[i][ti] - rows[i - 1][ti]) / 1000;\n"
    "        const dv = rows[i][ci] - rows[i - 1][ci];\n"
    "        pts.push({x: x, y: dt > 0 && dv >= 0 ? dv / dt : 0});\n"
    "      }\n"
    "      ch.data.datasets[k].data = pts;\n"
    "      latest.push(pts.length ? Math.round(pts[pts.length - 1].y * 100) / 100 : null);\n"
    "    });\n"
    "    ch.update('none');\n"
    "    summary.charts[name] = {points: ch.data.datasets[0].data.length, latest: latest};\n"
    "    ch.canvas.dataset.points = ch.data.datasets[0].data.length;\n"
    "    ch.canvas.dataset.latest = latest.join(',');\n"
    "  }\n"
    "  const st = charts.states;\n"
    "  st.data.labels = j.groups.map((g) => g.name + ' (' + g.type + ')');\n"
    "  ['up', 'down', 'rebooting', 'absent'].forEach((k, i) => { st.data.datasets[i].data = j.groups.map((g) "
    "=> g[k]); });\n"
    "  st.update('none');\n"
    "  summary.charts.states = {points: j.groups.length, latest: ['up', 'down', 'rebooting', "
    "'absent'].map((k) => j.now[k])};\n"
    "  st.canvas.dataset.points = j.groups.length;\n"
    "  st.canvas.dataset.latest = summary.charts.states.latest.join(',');\n"
    "  const n = j.now, tot = [['devices', j.devices], ['up', n.up], ['down', n.down], ['rebooting', "
    "n.rebooting],\n"
    "    ['absent', n.absent], ['sessions tcp', n.sessions_tcp], ['sessions ssh', n.sessions_ssh],\n"
    "    ['sessions tls', n.sessions_tls],\n"
    "    ['NETCONF RPCs', n.rpcs], ['RPC errors', n.rpc_errors], ['SNMP requests', n.snmp_requests],\n"
    "    ['notifications', n.notifications], ['traps', n.traps], ['auth failures', n.auth_failures],\n"
    "    ['session drops', n.session_drops], ['notification drops', n.notif_drops], ['SNMP drops', "
    "n.snmp_drops]];\n"
    "  $('totals').replaceChildren(...tot.map(([k, v]) => {\n"
    "    const d = document.createElement('div'); d.className = 't'; d.dataset.key = k;\n"
    "    const b = document.createElement('b'); b.textContent = v; d.append(b, k); return d; }));\n"
    "  $('status').textContent = 'updated ' + new Date(tLast).toLocaleTimeString() + ', ' + rows.length +\n"
    "    ' samples (one a second, 15 minutes kept)';\n"
    "  $('live-summary').textContent = JSON.stringify(summary);\n"
    "}\n"
    "async function tick() {\n"
    "  try {\n"
    "    const r = await fetch('/live.json?since=' + seq, {cache: 'no-store'});\n"
    "    if (!r.ok) throw new Error('HTTP ' + r.status);\n"
    "    const j = await r.json();\n"
    "    cols = j.columns;\n"
    "    for (const s of j.samples) { if (s[0] > seq) { rows.push(s); seq = s[0]; } }\n"
    "    if (rows.length > KEEP) rows.splice(0, rows.length - KEEP);\n"
    "    updates++;\n"
    "    redraw(j);\n"
    "  } catch (e) {\n"
    "    $('status').textContent = 'cannot reach fleetsim (' + e.message + '); retrying';\n"
    "  }\n"
    "  setTimeout(tick, PERIOD_MS);\n"
    "}\n"
    "tick();\n"
    "})();\n"
    "</script>\n</body></html>\n";

char *
live_page_build(size_t *len, char *err, size_t err_len)
{
    size_t chart_len = 0;
    char *chart = chartjs_load(&chart_len, err, err_len);
    struct sbuf out = {0};
    char *page;

    if (!chart) {
        return NULL;
    }
    sbuf_reserve(&out, sizeof page_head + chart_len + sizeof page_script);
    sbuf_add(&out, page_head, sizeof page_head - 1);
    sbuf_add(&out, chart, chart_len);
    sbuf_add(&out, page_script, sizeof page_script - 1);
    free(chart);
    if (!(page = sbuf_take(&out, len))) {
        snprintf(err, err_len, "out of memory building the live page");
    }
    return page;
}
