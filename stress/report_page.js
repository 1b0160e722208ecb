/*
 * fleetsim-stress report: the page's own script. report.c writes the runs' data (what the charts
 * need of each --json manifest) as JSON in <script id="fleetsim-runs">; this draws, with the
 * inlined Chart.js, the headline figures, the parameters (and what differs between runs), and the
 * charts of each mode, one dataset per run (reconcile's devices: a chart per run; ceiling: a section per
 * run, with a queue chart per cell). After each chart is drawn its container gets
 * data-points (the points of its data datasets) and data-drawn="1", which the tests read.
 * Embedded into the binary at build time (scripts/embed_text.cmake); no network is used.
 */
(function () {
  'use strict';
  var runs = JSON.parse(document.getElementById('fleetsim-runs').textContent);
  var root = document.getElementById('report');
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf',
                '#7f7f7f', '#bcbd22'];
  var chartCount = 0;

  Chart.defaults.animation = false;
  Chart.defaults.responsive = false;
  Chart.defaults.font.size = 12;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    }
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    return e;
  }
  function color(i) { return COLORS[i % COLORS.length]; }
  function get(o, path) {
    var parts = path.split('.');
    for (var i = 0; i < parts.length; i++) {
      if (o === null || typeof o !== 'object' || !(parts[i] in o)) {
        return undefined;
      }
      o = o[parts[i]];
    }
    return o;
  }
  function fmt(v) {
    if (v === null || v === undefined) {
      return 'n/a';
    }
    if (typeof v === 'number') {
      return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
    }
    if (typeof v === 'object') {
      return JSON.stringify(v);
    }
    return String(v);
  }
  /* Flatten nested objects to "a.b" keys (arrays kept whole). */
  function flatten(o, prefix, out) {
    out = out || {};
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      out[prefix] = o;
      return out;
    }
    Object.keys(o).forEach(function (k) { flatten(o[k], prefix ? prefix + '.' + k : k, out); });
    return out;
  }

  function table(rows, head) {
    var t = el('table');
    if (head) {
      var tr = el('tr');
      head.forEach(function (h) { tr.appendChild(el('th', null, h)); });
      t.appendChild(tr);
    }
    rows.forEach(function (r) {
      var tr = el('tr');
      r.forEach(function (c, i) { tr.appendChild(el(i ? 'td' : 'th', null, fmt(c))); });
      t.appendChild(tr);
    });
    return t;
  }

  /* A chart in its own container: datasets of data, plus marker datasets (marks: true) not counted. */
  function chart(parent, name, title, config, note, size) {
    var box = el('div', {'class': 'chart', 'data-chart': name});
    box.appendChild(el('h3', null, title));
    if (note) {
      box.appendChild(el('p', {'class': 'note'}, note));
    }
    var canvas = el('canvas', {width: String(size ? size[0] : 1100), height: String(size ? size[1] : 320)});
    box.appendChild(canvas);
    parent.appendChild(box);
    config.options = config.options || {};
    config.options.plugins = config.options.plugins || {};
    config.options.plugins.title = {display: false};
    var c = new Chart(canvas.getContext('2d'), config);
    var points = 0;
    c.data.datasets.forEach(function (d) {
      if (!d.marks) {
        points += d.data.length;
      }
    });
    box.setAttribute('data-points', String(points));
    box.setAttribute('data-datasets', String(c.data.datasets.filter(function (d) { return !d.marks; }).length));
    box.setAttribute('data-mark-points', String(c.data.datasets.reduce(function (a, d) {
      return a + (d.marks ? d.data.length : 0);
    }, 0)));
    box.setAttribute('data-drawn', '1');
    chartCount++;
    return c;
  }
  function missing(parent, name, title, why) {
    var box = el('div', {'class': 'chart missing', 'data-chart': name, 'data-points': '0'});
    box.appendChild(el('h3', null, title));
    box.appendChild(el('p', {'class': 'note'}, why));
    parent.appendChild(box);
  }

  function logAxis(title) {
    return {type: 'logarithmic', title: {display: true, text: title}};
  }
  function linAxis(title, extra) {
    var a = {type: 'linear', title: {display: true, text: title}};
    Object.keys(extra || {}).forEach(function (k) { a[k] = extra[k]; });
    return a;
  }
  function series(arr) { return arr.map(function (v, i) { return {x: i, y: v}; }); }
  function line(label, data, i, extra) {
    var d = {label: label, data: data, borderColor: color(i), backgroundColor: color(i), pointRadius: 0,
             borderWidth: 1.5, fill: false};
    Object.keys(extra || {}).forEach(function (k) { d[k] = extra[k]; });
    return d;
  }
  function xyChart(parent, name, title, datasets, xAxis, yAxis, note) {
    return chart(parent, name, title, {type: 'line', data: {datasets: datasets},
                 options: {parsing: false, normalized: true, scales: {x: xAxis, y: yAxis}}}, note);
  }

  /* Histograms: {unit, buckets_per_decade, first_upper, counts}; bucket i is below first_upper*10^((i+1)/k). */
  function histBounds(h, i) {
    return [h.first_upper * Math.pow(10, i / h.buckets_per_decade),
            h.first_upper * Math.pow(10, (i + 1) / h.buckets_per_decade)];
  }
  function histCharts(parent, name, title, hists, scale, unit) {
    var have = hists.filter(function (h) { return h.hist && Array.isArray(h.hist.counts); });
    if (!have.length) {
      missing(parent, name, title, 'not in this manifest (written by an older fleetsim-stress)');
      missing(parent, name + '-cdf', title + ': CDF', 'not in this manifest');
      return;
    }
    var hd = [], cd = [];
    have.forEach(function (h) {
      var total = h.hist.counts.reduce(function (a, b) { return a + b; }, 0);
      var acc = 0, pts = [], cdf = [];
      h.hist.counts.forEach(function (n, i) {
        var b = histBounds(h.hist, i);
        acc += n;
        pts.push({x: Math.sqrt(b[0] * b[1]) / scale, y: n});
        cdf.push({x: b[1] / scale, y: total ? acc / total : 0});
      });
      hd.push(line(h.label, pts, h.index, {stepped: 'middle', pointRadius: 1}));
      cd.push(line(h.label, cdf, h.index, {pointRadius: 1}));
    });
    xyChart(parent, name, title + ' (log scale, ' + have[0].hist.buckets_per_decade + ' buckets per decade)', hd,
            logAxis(unit), linAxis('count', {beginAtZero: true}));
    xyChart(parent, name + '-cdf', title + ': CDF', cd, logAxis(unit), linAxis('fraction at or below', {min: 0, max: 1}));
  }

  /* A vertical line per mark ({x, label}) over the chart area: this page's own small plugin. */
  var markPlugin = {
    id: 'fleetsimMarks',
    afterDatasetsDraw: function (c) {
      var marks = (c.options.plugins.fleetsimMarks || {}).marks || [];
      var x = c.scales.x, area = c.chartArea, ctx = c.ctx;
      ctx.save();
      marks.forEach(function (m) {
        var px = x.getPixelForValue(m.x);
        if (px < area.left || px > area.right) {
          return;
        }
        ctx.strokeStyle = m.color || '#555';
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(px, area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = m.color || '#555';
        ctx.font = '11px sans-serif';
        ctx.fillText(m.label, px + 3, area.top + 12 + (m.row || 0) * 12);
      });
      ctx.restore();
    }
  };

  function label(run) { return run.label; }
  function complete(run) {
    var r = run.results || {};
    switch (run.mode) {
    case 'edit':
    case 'restconf':
      return r.complete === true;
    case 'mount':
      return r.failed === 0 && !r.interrupted;
    case 'notify':
      return r.failed === 0 && r.ended_as_asked === true && !r.interrupted;
    case 'snmp':
      return r.failed === 0 && !r.interrupted;
    case 'controller-mount':
      return r.all_connected === true;
    case 'reconcile':
      return r.exit === 0;
    case 'ceiling':
      return ceilingComplete(run);
    }
    return false;
  }
  var HEADLINES = {
    'edit': ['requests_per_second', 'elapsed_s', 'edits_sent', 'edits_answered', 'edits_ok', 'edits_rpc_error',
             'latency_us.p50', 'latency_us.p99', 'latency_us.max', 'client_cpu_us_per_edit'],
    'restconf': ['requests_per_second', 'elapsed_s', 'requests_sent', 'requests_answered', 'accepted',
                 'other_status', 'latency_us.p50', 'latency_us.p99', 'latency_us.max'],
    'mount': ['mounted', 'failed', 'all_done_s', 'sessions_per_second', 'time_to_hello_us.p50',
              'time_to_hello_us.p99', 'time_to_mounted_us.p50', 'losses', 'reconnects'],
    'notify': ['subscribed', 'failed', 'ended', 'total_received', 'notifications_per_second', 'order.gaps',
               'order.duplicates', 'order.reordered', 'received_per_device.min', 'received_per_device.max'],
    'snmp': ['collections', 'completed', 'failed', 'collections_per_second', 'collection_time_ms.p50',
             'collection_time_ms.p99', 'response_time_ms.p50', 'timeouts', 'retries', 'fit.r_ms', 'fit.c_ms'],
    'controller-mount': ['all_connected', 'time_to_all_connected_s', 'elapsed_s', 'polls', 'errors',
                         'max.connected', 'max.failed'],
    'reconcile': ['counts.OK', 'counts.LOSS', 'counts.DUP', 'counts.MISSING', 'counts.PHANTOM',
                  'broken_report_rows', 'sent', 'received', 'devices', 'devices_truncated']
  };
  function failureOf(run) {
    var r = run.results || {};
    return r.failure || r.first_failure || r.first_error || null;
  }

  function headline(parent) {
    var sec = el('section', {id: 'headline'});
    sec.appendChild(el('h2', null, 'Headline figures'));
    runs.forEach(function (run) {
      var rows = [['manifest', run.file], ['mode', run.mode], ['fleetsim-stress', run.version],
                  ['complete', complete(run) ? 'yes' : 'no']];
      if (run.mode === 'ceiling') {
        rows = rows.concat(ceilingHeadlineRows(run));
      } else {
        rows.push(['interrupted', get(run, 'results.interrupted') || 'no']);
      }
      (HEADLINES[run.mode] || []).forEach(function (k) { rows.push([k, get(run.results, k)]); });
      if (run.mode !== 'ceiling') {
        rows.push(['failure', failureOf(run) || 'none']);
      }
      var f = get(run.results, 'failures');
      if (f && typeof f === 'object') {
        Object.keys(f).forEach(function (k) {
          if (f[k]) {
            rows.push(['failures: ' + k, f[k]]);
          }
        });
      }
      var box = el('div', {'class': 'run ' + (complete(run) ? 'ok' : 'bad'), 'data-run': run.label});
      box.appendChild(el('h3', null, run.label));
      box.appendChild(table(rows));
      sec.appendChild(box);
    });
    parent.appendChild(sec);
  }

  /* Parameters (and scenario members) of each run; between runs of one mode, the ones that differ. */
  function flatParams(run) {
    if (run.mode === 'ceiling') {
      var g = flatten(run.controls || {}, 'controls');
      flatten(run.sut === undefined ? null : run.sut, 'sut', g);
      flatten(run.measure === undefined ? null : run.measure, 'measure', g);
      flatten(run.rules || {}, 'rules', g);
      flatten(run.probes || {}, 'probes', g);
      return g;
    }
    var f = flatten(run.parameters || {}, 'parameters');
    flatten(run.scenario === undefined ? null : run.scenario, 'scenario', f);
    return f;
  }
  function cell(v) {
    var t = fmt(v);
    return t.length > 120 ? t.slice(0, 117) + '...' : t;
  }
  function parameters(parent) {
    var sec = el('section', {id: 'parameters'});
    sec.appendChild(el('h2', null, 'Parameters and controls'));
    var modes = [];
    runs.forEach(function (r) {
      if (modes.indexOf(r.mode) < 0) {
        modes.push(r.mode);
      }
    });
    if (modes.length > 1) {
      sec.appendChild(el('p', {id: 'diff-flag', 'class': 'flag'}, 'These runs are of ' + modes.length +
                         ' modes (' + modes.join(', ') + '): only runs of one mode are compared below.'));
    }
    modes.forEach(function (mode) {
      var list = runs.filter(function (r) { return r.mode === mode; });
      var flat = list.map(flatParams);
      if (list.length === 1) {
        sec.appendChild(el('h3', null, list[0].label + ' (' + mode + ')'));
        var t1 = table(Object.keys(flat[0]).map(function (k) { return [k, cell(flat[0][k])]; }), ['parameter', 'value']);
        t1.setAttribute('class', 'params');
        sec.appendChild(t1);
        return;
      }
      var keys = {};
      flat.forEach(function (f) { Object.keys(f).forEach(function (k) { keys[k] = 1; }); });
      var diff = Object.keys(keys).filter(function (k) {
        return flat.some(function (f) { return JSON.stringify(f[k]) !== JSON.stringify(flat[0][k]); });
      });
      sec.appendChild(el('h3', null, mode + ': what differs between ' + list.length + ' runs'));
      var t = table(diff.map(function (k) {
        return [k].concat(flat.map(function (f) { return f[k] === undefined ? '(absent)' : cell(f[k]); }));
      }), ['parameter'].concat(list.map(label)));
      t.setAttribute('class', 'diff');
      t.setAttribute('data-mode', mode);
      t.setAttribute('data-differ', diff.join(' '));
      sec.appendChild(t);
      if (!diff.length) {
        sec.appendChild(el('p', {'class': 'note'}, 'The runs have the same parameters and scenario.'));
      } else if (diff.length > 1) {
        sec.appendChild(el('p', {'class': 'flag diff-flag', 'data-mode': mode},
                           diff.length + ' things differ between these runs: two runs compare only when one ' +
                           'thing does, so no difference below can be put down to one of them.'));
      }
      var same = Object.keys(keys).filter(function (k) { return diff.indexOf(k) < 0; });
      var det = el('details');
      det.appendChild(el('summary', null, same.length + ' parameters the runs share'));
      det.appendChild(table(same.map(function (k) { return [k, cell(flat[0][k])]; })));
      sec.appendChild(det);
    });
    parent.appendChild(sec);
  }

  function perSecondOk(parent, list, okKey, errKey, title) {
    var ds = [], n = 0;
    list.forEach(function (run) {
      var ps = run.per_second;
      if (!ps || !Array.isArray(ps[okKey])) {
        return;
      }
      ds.push(line(label(run) + ': ' + okKey, series(ps[okKey]), n++));
      if (errKey && Array.isArray(ps[errKey])) {
        ds.push(line(label(run) + ': ' + errKey, series(ps[errKey]), n++, {borderDash: [5, 3]}));
      }
    });
    return ds;
  }

  function editLike(parent, list, kind) {
    histCharts(parent, kind + '-latency', 'Latency', list.map(function (run) {
      return {label: label(run), index: run.index, hist: get(run, 'results.latency_histogram')};
    }), 1, 'latency (us)');
    var ds = perSecondOk(parent, list, 'ok', 'errors');
    if (ds.length) {
      xyChart(parent, kind + '-rate', 'Requests answered per second', ds, linAxis('seconds since the clock started'),
              linAxis('requests / s', {beginAtZero: true}));
    } else {
      missing(parent, kind + '-rate', 'Requests answered per second', 'not in this manifest');
    }
    var tds = [], n = 0;
    list.forEach(function (run) {
      var tags = get(run, 'per_second.errors_by_tag') || {};
      Object.keys(tags).forEach(function (t) {
        tds.push(line(label(run) + ': ' + t, series(tags[t]), n++));
      });
    });
    if (tds.length) {
      xyChart(parent, kind + '-errors', kind === 'edit' ? 'rpc-errors by error-tag per second' :
              'Answers by HTTP status (not 200, 201, 204) per second', tds, linAxis('seconds'),
              linAxis('errors / s', {beginAtZero: true}));
    } else {
      missing(parent, kind + '-errors', 'Errors by tag per second', 'no errors in ' + (list.length > 1 ? 'these runs' : 'this run'));
    }
  }

  function mount(parent, list) {
    xyChart(parent, 'mount-sessions', 'Sessions up over time', list.map(function (run, i) {
      var ps = run.per_second || {}, up = 0;
      var mounted = ps.mounted || [], lost = ps.lost || [];
      return line(label(run), mounted.map(function (m, s) {
        up += m - (lost[s] || 0);
        return {x: s, y: up};
      }), i);
    }), linAxis('seconds'), linAxis('sessions up', {beginAtZero: true}));
    histCharts(parent, 'mount-hello', 'Time to hello', list.map(function (run) {
      return {label: label(run), index: run.index, hist: get(run, 'results.time_to_hello_histogram')};
    }), 1000, 'milliseconds');
    var causes = {};
    list.forEach(function (run) { Object.keys(get(run, 'results.failures') || {}).forEach(function (k) { causes[k] = 1; }); });
    causes = Object.keys(causes);
    chart(parent, 'mount-failures', 'Failures by cause', {type: 'bar', data: {labels: causes, datasets: list.map(function (run, i) {
      return {label: label(run), data: causes.map(function (c) { return get(run, 'results.failures')[c] || 0; }),
              backgroundColor: color(i)};
    })}, options: {scales: {y: {beginAtZero: true}}}});
  }

  function notify(parent, list) {
    xyChart(parent, 'notify-rate', 'Notifications delivered per second', list.map(function (run, i) {
      return line(label(run), series(run.buckets || []), i);
    }), linAxis('seconds since the first notification'), linAxis('notifications / s', {beginAtZero: true}));
    xyChart(parent, 'notify-devices', 'Notifications received per device, sorted', list.map(function (run, i) {
      var r = ((run.device_columns || {}).received || []).slice().sort(function (a, b) { return b - a; });
      return line(label(run), series(r), i);
    }), linAxis('devices, most first'), linAxis('received', {beginAtZero: true}));
    var kinds = ['gaps', 'missing', 'duplicates', 'reordered'];
    var ds = [], labels = [];
    list.forEach(function (run, i) {
      var c = run.device_columns || {};
      var bad = [];
      (c.received || []).forEach(function (_, d) {
        var sum = 0;
        kinds.forEach(function (k) { sum += (c[k] || [])[d] || 0; });
        if (sum) {
          bad.push({d: d, sum: sum});
        }
      });
      bad.sort(function (a, b) { return b.sum - a.sum; });
      bad = bad.slice(0, 200);
      labels = labels.length >= bad.length ? labels : bad.map(function (b) { return 'device ' + b.d; });
      kinds.forEach(function (k, j) {
        ds.push({label: label(run) + ': ' + k, stack: label(run), backgroundColor: color(4 * i + j),
                 data: bad.map(function (b) { return (c[k] || [])[b.d] || 0; })});
      });
    });
    var checked = list.some(function (run) { return get(run, 'results.order.checked'); });
    if (!checked) {
      missing(parent, 'notify-order', 'Gaps, duplicates and reordering by device',
              'order not checked: the run had no --seq-element');
    } else {
      chart(parent, 'notify-order', 'Gaps, duplicates and reordering by device (devices with any, worst first, at most 200)',
            {type: 'bar', data: {labels: labels, datasets: ds},
             options: {scales: {x: {stacked: true}, y: {stacked: true, beginAtZero: true}}}});
    }
  }

  function snmp(parent, list) {
    histCharts(parent, 'snmp-collection', 'Collection time', list.map(function (run) {
      return {label: label(run), index: run.index, hist: get(run, 'results.collection_time_histogram')};
    }), 1000, 'collection time (ms)');
    histCharts(parent, 'snmp-response', 'Response time', list.map(function (run) {
      return {label: label(run), index: run.index, hist: get(run, 'results.response_time_histogram')};
    }), 1000, 'response time (ms)');
    var ds = [], n = 0;
    list.forEach(function (run) {
      var fp = get(run, 'results.fit_points');
      if (!fp) {
        return;
      }
      var pts = fp.requests.map(function (p, i) { return {x: p, y: fp.t_ms[i]}; });
      ds.push({type: 'scatter', label: label(run) + ': collections (P, T)', data: pts, backgroundColor: color(n),
               pointRadius: 2});
      var fit = get(run, 'results.fit');
      if (fit && fit.fitted && pts.length) {
        var lo = Math.min.apply(null, fp.requests), hi = Math.max.apply(null, fp.requests);
        ds.push(line(label(run) + ': T = P x ' + fmt(fit.r_ms) + ' ms + ' + fmt(fit.c_ms) + ' ms',
                     [{x: lo, y: lo * fit.r_ms + fit.c_ms}, {x: hi, y: hi * fit.r_ms + fit.c_ms}], n,
                     {marks: true, borderWidth: 2}));
      }
      n++;
    });
    if (ds.length) {
      xyChart(parent, 'snmp-fit', 'Collection time against requests per collection, with the fit T = P x R + c', ds,
              linAxis('requests per collection (P)'), linAxis('collection time T (ms)', {beginAtZero: true}));
    } else {
      missing(parent, 'snmp-fit', 'The fit T = P x R + c', 'not in this manifest');
    }
    var tds = [];
    n = 0;
    list.forEach(function (run) {
      var ps = run.per_second || {};
      ['timeouts', 'retries', 'failed'].forEach(function (k) {
        if (Array.isArray(ps[k])) {
          tds.push(line(label(run) + ': ' + k, series(ps[k]), n++));
        }
      });
    });
    if (tds.length) {
      xyChart(parent, 'snmp-timeouts', 'Timeouts, retries and failed collections per second', tds,
              linAxis('seconds since the first send'), linAxis('per second', {beginAtZero: true}));
    } else {
      missing(parent, 'snmp-timeouts', 'Timeouts and retries per second', 'not in this manifest');
    }
  }

  function controllerMount(parent, list) {
    var ds = [], marks = [], n = 0;
    list.forEach(function (run) {
      var curve = run.curve || [];
      ['connected', 'connecting', 'failed'].forEach(function (k) {
        ds.push(line(label(run) + ': ' + k, curve.map(function (s) { return {x: s.t_s, y: s[k]}; }), n++,
                     {spanGaps: false}));
      });
      (run.events || []).forEach(function (e, j) {
        marks.push({x: e.t_s, row: j % 3, color: color(n + j),
                    label: '#' + e.seq + ' ' + e.action + (e.event ? ' ' + e.event : '') + ' (' + e.state + ')'});
      });
    });
    var c = chart(parent, 'controller-mount-curve', 'Nodes connected, connecting and failed over time (events marked)',
                  {type: 'line', data: {datasets: ds}, plugins: [markPlugin],
                   options: {parsing: false, scales: {x: linAxis('seconds since the first poll'),
                                                       y: linAxis('nodes', {beginAtZero: true})},
                             plugins: {fleetsimMarks: {marks: marks}}}});
    c.canvas.parentNode.setAttribute('data-marks', String(marks.length));
    var evRows = [];
    list.forEach(function (run) {
      (run.events || []).forEach(function (e) {
        evRows.push([e.seq, label(run), e.t_s, e.action, e.origin, e.event, e.devices, e.lost, e.healed_s, e.state]);
      });
    });
    if (evRows.length) {
      var t = table(evRows, ['seq', 'run', 't_s', 'action', 'origin', 'event', 'devices', 'lost', 'healed_s', 'state']);
      t.setAttribute('id', 'events');
      parent.appendChild(t);
    }
  }

  /* reconcile: devices by class, then each run's devices, sent against received, the worst losses first. */
  var RECON_CLASSES = ['OK', 'LOSS', 'DUP', 'MISSING', 'PHANTOM'];
  function reconcile(parent, list) {
    chart(parent, 'reconcile-classes', 'Devices by class', {type: 'bar', data: {labels: RECON_CLASSES,
          datasets: list.map(function (run, i) {
            return {label: label(run), backgroundColor: color(i), data: RECON_CLASSES.map(function (k) {
              return get(run, 'results.counts.' + k) || 0;
            })};
          })}, options: {scales: {y: {beginAtZero: true, title: {display: true, text: 'devices'}}}}});
    list.forEach(function (run, i) {
      var name = 'reconcile-devices' + (i ? '-' + i : '');
      var rows = run.recon_devices || [];
      var total = run.recon_devices_total || 0;
      var sentName = get(run, 'parameters.join') === 'restconf' ? 'accepted' : 'sent';
      var title = (list.length > 1 ? label(run) + ': ' : '') + 'Per device, ' + sentName +
                  ' against received (sorted by loss, worst first)';
      if (!rows.length) {
        missing(parent, name, title, 'no device lines in this manifest');
        return;
      }
      var notes = [];
      if (total > rows.length) {
        notes.push('the ' + rows.length + ' worst of ' + total + ' devices drawn');
      }
      if (get(run, 'results.devices_truncated')) {
        notes.push('the manifest kept the first ' + get(run, 'results.devices_kept') + ' of ' +
                   get(run, 'results.devices') + ' device lines');
      }
      var labels = rows.map(function (d) {
        /* A collector's file (--format syslog|snmptrapd|csv): a row per source. */
        if (d.source !== undefined) {
          return d.channel + ' ' + d.source + ' ' + d.class;
        }
        /* An IPv6 address in brackets before its port, as reconcile prints it. */
        var host = d.address && d.address.indexOf(':') >= 0 ? '[' + d.address + ']' : d.address;
        return (d.device === null ? '' : 'device ' + d.device + ' ') + (host ? host + ':' : 'port ') +
               d.port + ' ' + d.class;
      });
      var c = chart(parent, name, title, {type: 'bar', data: {labels: labels, datasets: [
        {label: sentName, backgroundColor: color(0), data: rows.map(function (d) { return d.sent || 0; })},
        {label: 'received', backgroundColor: color(2), data: rows.map(function (d) { return d.received; })}
      ]}, options: {scales: {x: {ticks: {autoSkip: true, maxTicksLimit: 40}},
                             y: {beginAtZero: true, title: {display: true, text: 'notifications or edits'}}}}},
      notes.length ? notes.join('; ') : null);
      c.canvas.parentNode.setAttribute('data-devices', String(total));
      c.canvas.parentNode.setAttribute('data-cut', total > rows.length ? '1' : '0');
    });
  }

  /* ceiling: the method's manifest (docs/ARCHITECTURE.md, "fleetsim-stress ceiling"). A section per run. */
  var QUANTITY = {'sustained_ceiling': 'Sustained ceiling', 'service_rate': 'Service rate'};
  function quantityName(q) { return QUANTITY[q] || ('unlabelled quantity ' + fmt(q)); }
  function rate(v) { return v === null || v === undefined ? 'n/a' : fmt(v) + '/s'; }
  function pct(v) { return v === null || v === undefined ? 'n/a' : fmt(v * 100) + ' %'; }
  /* The queue depth of a cell's samples (load, then settle) as {x: t, y: depth}: the --queue probe's reading
     when the run had one, else the backlog since the cell's first load sample, arrived - persisted (or
     sent - persisted), so the settle samples continue the load's line; else the sample's own "queue". */
  function cellDepths(run, c, which) {
    var first = (c.samples || [])[0] || {};
    var probe = get(run, 'probes.queue');
    function num(v) { return typeof v === 'number'; }
    return (c[which] || []).map(function (s) {
      var y = num(s.queue) ? s.queue : null;
      if (!probe && num(s.persisted) && num(first.persisted)) {
        var inflow = num(s.arrived) && num(first.arrived) ? s.arrived - first.arrived :
                     num(s.sent) && num(first.sent) ? s.sent - first.sent : null;
        y = inflow === null ? y : inflow - (s.persisted - first.persisted);
      }
      return {x: s.t, y: y};
    });
  }
  /* A counter's rate over a cell's load samples: (last - first) / (t last - t first), first and last read. */
  function counterRate(samples, k) {
    var have = (samples || []).filter(function (s) { return typeof s[k] === 'number' && typeof s.t === 'number'; });
    if (have.length < 2 || have[have.length - 1].t <= have[0].t) {
      return null;
    }
    return (have[have.length - 1][k] - have[0][k]) / (have[have.length - 1].t - have[0].t);
  }
  /* The answer's cell: result.answer_cell when the manifest names it, else (sustained) the flat baseline or
     search cell of the highest per-device rate. */
  function answerCell(run) {
    var best = null;
    var named = get(run, 'result.answer_cell');
    if (named !== undefined) {
      return named === null ? null : (run.cells || []).filter(function (c) { return c.index === named; })[0] || null;
    }
    if (run.measured_quantity !== 'sustained_ceiling') {
      return null;
    }
    (run.cells || []).forEach(function (c) {
      if (c.verdict === 'flat' && (c.phase === 'baseline' || c.phase === 'search') &&
          (!best || c.per_device_rate > best.per_device_rate)) {
        best = c;
      }
    });
    return best;
  }
  function ceilingComplete(run) {
    return get(run, 'result.valid') === true && !run.interrupted && get(run, 'result.regression') !== true;
  }
  function ceilingHeadlineRows(run) {
    var r = run.result || {};
    return [['measured quantity', quantityName(r.quantity || run.measured_quantity)],
            ['rate (fleet)', rate(r.rate)], ['per-device rate', rate(r.per_device_rate)], ['devices', r.devices],
            ['valid', r.valid ? 'yes' : 'no'], ['why', r.why], ['regression', r.regression ? 'yes' : 'no'],
            ['interrupted', run.interrupted ? 'yes' + (run.signal ? ' (' + run.signal + ')' : '') : 'no']];
  }

  function ceilingAnswer(parent, run) {
    var r = run.result || {};
    var q = r.quantity || run.measured_quantity;
    var text = quantityName(q) + ': ' + rate(r.rate) + ' for the fleet (' + rate(r.per_device_rate) +
               ' per device x ' + fmt(r.devices) + ' devices)';
    parent.appendChild(el('p', {'class': 'answer', 'data-quantity': fmt(q), 'data-rate': fmt(r.rate),
                                'data-valid': r.valid ? '1' : '0'}, text));
    if (r.valid) {
      parent.appendChild(el('p', {'class': 'note verdict'}, 'Valid: ' + fmt(r.why)));
    } else {
      parent.appendChild(el('p', {'class': 'flag', 'data-flag': 'invalid'}, 'Not a result: ' + fmt(r.why)));
    }
    if (r.regression) {
      parent.appendChild(el('p', {'class': 'flag', 'data-flag': 'regression'},
                            'Regression: the collector reordered a device\'s events (' +
                            fmt(get(run, 'observed.ordering.inversions')) + ' inversions)'));
    }
    if (run.interrupted) {
      parent.appendChild(el('p', {'class': 'flag', 'data-flag': 'interrupted'}, 'Interrupted' +
                            (run.signal ? ' by ' + run.signal : '') + ' after ' + fmt(run.elapsed_s) +
                            ' s: the cells so far are shown; none after it ran.'));
    }
    var ctl = run.controls || {};
    parent.appendChild(el('p', {'class': 'note'}, 'Controls: ' + fmt(ctl.devices) + ' devices' +
                          (ctl.group ? ' (group ' + ctl.group + ')' : '') + ', channel ' + fmt(ctl.channel) +
                          ', format ' + fmt(ctl.format) + ', transport ' + fmt(ctl.transport) + ', ' +
                          fmt(ctl.generator) + ' ' + fmt(ctl.generator_version) + (ctl.collector_version ?
                          ', collector ' + ctl.collector_version : '') + '. Slope test (decided before the run): ' +
                          fmt(get(run, 'rules.slope_test'))));
  }

  var CELL_HEAD = ['cell', 'phase', 'per-device rate', 'offered', 'verdict', 'why', 'slope', 'slope, last half',
                   'threshold', 'observed per-device rate', 'sent', 'arrived', 'persisted', 'loss in', 'loss inside',
                   'elapsed s'];
  function ceilingCells(parent, run, answer) {
    var t = table([], CELL_HEAD);
    t.setAttribute('class', 'cells');
    t.setAttribute('data-run', run.label);
    (run.cells || []).forEach(function (c) {
      var tr = el('tr', {'data-cell': fmt(c.index), 'data-verdict': fmt(c.verdict)});
      if (c === answer) {
        tr.setAttribute('data-answer', '1');
        tr.setAttribute('style', 'background:#e6f4e6;font-weight:bold');
      }
      [c.index, c.phase, c.per_device_rate, c.offered_rate, c.verdict + (c === answer ? ' (the answer)' : '') +
       (c.cut_short ? ' (cut short)' : ''), c.why, c.slope, c.slope_last_half, c.threshold,
       c.observed_per_device_rate, c.sent, c.arrived, c.persisted, c.loss_in, c.loss_inside, c.elapsed_s]
        .forEach(function (v, i) { tr.appendChild(el(i ? 'td' : 'th', null, fmt(v))); });
      t.appendChild(tr);
    });
    parent.appendChild(el('h3', null, 'Cells in run order'));
    if (run.cells_total > (run.cells || []).length) {
      parent.appendChild(el('p', {'class': 'note cut'}, 'the first ' + run.cells.length + ' of ' + run.cells_total +
                            ' cells are shown'));
    }
    parent.appendChild(t);
    var d = run.discarded || [];
    parent.appendChild(el('h3', null, 'Discarded cells'));
    if (!d.length) {
      parent.appendChild(el('p', {'class': 'note'}, 'none'));
      return;
    }
    var dt = table(d.map(function (x) { return [x.index, x.per_device_rate, x.why]; }),
                   ['cell', 'per-device rate', 'why discarded']);
    dt.setAttribute('class', 'discarded');
    parent.appendChild(dt);
  }

  /* A chart per cell: queue depth over time (load, then settle dashed), its fitted line over the window. */
  function ceilingQueues(parent, run, answer, prefix) {
    var grid = el('div', {'class': 'cell-charts'});
    parent.appendChild(el('h3', null, 'Queue depth over time, per cell, with the fitted slope'));
    parent.appendChild(grid);
    (run.cells || []).forEach(function (c) {
      var name = prefix + '-queue-' + c.index;
      var title = 'cell ' + c.index + ' (' + c.phase + ', ' + rate(c.per_device_rate) + ' per device, ' +
                  rate(c.offered_rate) + ' offered): ' + c.verdict + ', slope ' + fmt(c.slope) + '/s (threshold ' +
                  fmt(c.threshold) + '/s)' + (c === answer ? ', the answer' : '');
      var load = cellDepths(run, c, 'samples');
      var settle = cellDepths(run, c, 'settle');
      if (!load.length && !settle.length) {
        missing(grid, name, title, 'no samples in this cell');
        return;
      }
      var colour = c.verdict === 'flat' ? 2 : c.verdict === 'positive' ? 1 : 7;
      var ds = [line('queue depth', load, colour, {pointRadius: 1})];
      if (settle.length) {
        ds.push(line('after the load stopped', settle, colour, {borderDash: [4, 3], pointRadius: 1}));
      }
      var fit = typeof c.slope === 'number' && typeof c.intercept === 'number' && load.length;
      if (fit) {
        var t0 = load[0].x, t1 = load[load.length - 1].x;
        ds.push(line('fit: ' + fmt(c.intercept) + ' + ' + fmt(c.slope) + ' x t', [
          {x: t0, y: c.intercept + c.slope * t0}, {x: t1, y: c.intercept + c.slope * t1}], 0,
          {marks: true, borderWidth: 2, borderDash: [6, 3]}));
      }
      var notes = [];
      if (c.samples_total) {
        notes.push(load.length + ' of ' + c.samples_total + ' samples drawn (evenly thinned)');
      }
      if (c.settle_total) {
        notes.push(settle.length + ' of ' + c.settle_total + ' settle samples drawn');
      }
      var ch = chart(grid, name, title, {type: 'line', data: {datasets: ds},
                     options: {parsing: false, scales: {x: linAxis('seconds since the cell started'),
                                                        y: linAxis('queue depth', {beginAtZero: true})}}},
                     notes.length ? notes.join('; ') : null, [540, 220]);
      var box = ch.canvas.parentNode;
      box.setAttribute('data-verdict', fmt(c.verdict));
      box.setAttribute('data-slope', fmt(c.slope));
      /* The fitted line as Chart.js holds it, for the tests. */
      var fitLine = ch.data.datasets.filter(function (d) { return d.marks; })[0];
      box.setAttribute('data-fit', fitLine ? JSON.stringify(fitLine.data) : '');
      box.setAttribute('data-answer', c === answer ? '1' : '0');
    });
  }

  /* Over the cells in run order: offered against arrived against persisted rates, the answer marked. */
  function ceilingRates(parent, run, answer, prefix) {
    var cells = run.cells || [];
    var name = prefix + '-rates';
    var title = 'Offered, arrived and persisted rates per cell, in run order (the answer marked)';
    if (!cells.length) {
      missing(parent, name, title, 'no cells in this manifest');
      return;
    }
    var labels = cells.map(function (c) { return c.index + ' ' + c.phase + ' ' + fmt(c.per_device_rate) + '/dev'; });
    var star = cells.map(function (c) { return c === answer ? 9 : 3; });
    var style = cells.map(function (c) { return c === answer ? 'star' : 'circle'; });
    var ds = [
      line('offered', cells.map(function (c) { return c.offered_rate; }), 0,
           {pointRadius: star, pointStyle: style, borderWidth: 2}),
      line('arrived', cells.map(function (c) { return counterRate(c.samples, 'arrived'); }), 3,
           {pointRadius: star, pointStyle: style}),
      line('persisted', cells.map(function (c) { return counterRate(c.samples, 'persisted'); }), 2,
           {pointRadius: star, pointStyle: style})
    ];
    var r = get(run, 'result.rate');
    if (typeof r === 'number') {
      ds.push(line('answer: ' + quantityName(get(run, 'result.quantity') || run.measured_quantity) + ' ' + rate(r),
                   cells.map(function () { return r; }), 4, {marks: true, borderDash: [8, 4], borderWidth: 2}));
    }
    var ch = chart(parent, name, title, {type: 'line', data: {labels: labels, datasets: ds},
                   options: {scales: {y: linAxis('messages / s (whole fleet)', {beginAtZero: true})}}});
    var box = ch.canvas.parentNode;
    box.setAttribute('data-answer-cell', answer ? fmt(answer.index) : '');
    box.setAttribute('data-answer-rate', typeof r === 'number' ? fmt(r) : '');
  }

  function ceilingChecks(parent, run) {
    var rec = run.reconciliation || {};
    var rows = [['(1) sent: reached the wire', rec.sent], ['(2) arrived at the collector', rec.arrived],
                ['(3) persisted', rec.persisted],
                ['(1) - (2): lost on the way in', typeof rec.sent === 'number' && typeof rec.arrived === 'number' ?
                  rec.sent - rec.arrived : null],
                ['(2) - (3): backlog or dropped inside', typeof rec.arrived === 'number' &&
                  typeof rec.persisted === 'number' ? rec.arrived - rec.persisted : null]];
    Object.keys(rec.drop_counters || {}).forEach(function (k) { rows.push(['drop counter ' + k, rec.drop_counters[k]]); });
    parent.appendChild(el('h3', null, 'The three points, over every cell'));
    var t = table(rows);
    t.setAttribute('class', 'reconciliation');
    parent.appendChild(t);

    var li = rec.loss_isolation_run;
    var tol = get(run, 'rules.tolerance');
    parent.appendChild(el('h3', null, 'Loss isolation'));
    if (!li) {
      parent.appendChild(el('p', {'class': 'note verdict', 'data-check': 'loss-isolation'}, 'not run'));
    } else {
      parent.appendChild(el('p', {'class': li.within_tolerance ? 'note verdict' : 'flag', 'data-check': 'loss-isolation',
                                  'data-ok': li.within_tolerance ? '1' : '0'},
                            (li.within_tolerance ? 'Passed: ' : 'Failed, the pipeline is lossy at any rate: ') +
                            '(1) and (3) differ by ' + pct(li.share) + ' (tolerance ' + pct(tol) + ') at ' +
                            rate(li.rate) + ' (' + rate(li.per_device_rate) + ' per device), queue ' + fmt(li.queue_slope)));
      parent.appendChild(table([['sent', li.sent], ['arrived', li.arrived], ['persisted', li.persisted]]));
    }

    var si = run.silence;
    parent.appendChild(el('h3', null, 'Silence before the run'));
    var silent = si && si.checked && si.silent;
    parent.appendChild(el('p', {'class': !si || !si.checked || si.silent ? 'note verdict' : 'flag',
                                'data-check': 'silence', 'data-ok': silent ? '1' : '0'},
                          !si || !si.checked ? 'not checked' : si.silent ?
                          'Silent: sent stayed at ' + fmt(si.sent_before) + ' for ' + fmt(si.seconds) + ' s idle' :
                          'Not silent: sent moved from ' + fmt(si.sent_before) + ' to ' + fmt(si.sent_after) + ' in ' +
                          fmt(si.seconds) + ' s idle (background emission inflates (3))'));

    var ob = run.observed || {};
    var ord = ob.ordering;
    parent.appendChild(el('h3', null, 'Ordering'));
    parent.appendChild(el('p', {'class': ob.ordering_preserved === false ? 'flag' : 'note verdict', 'data-check': 'ordering',
                                'data-ok': ob.ordering_preserved === true ? '1' : ob.ordering_preserved === false ? '0' : ''},
                          ob.ordering_preserved === null || ob.ordering_preserved === undefined ?
                          'not checked (no --ordering)' :
                          (ob.ordering_preserved ? 'Preserved: ' : 'Broken, a regression: ') +
                          fmt(get(ob, 'ordering.inversions')) + ' inversions in ' + fmt(ord && ord.lines) +
                          ' lines from ' + fmt(ord && ord.sources) + ' sources (' + fmt(ord && ord.file) + ')'));

    var id = ob.identity;
    parent.appendChild(el('h3', null, 'The identity: messages per work unit / service time x workers'));
    var st = ob.service_time_ms;
    parent.appendChild(table([
      ['service time per work unit (ms)', st ? fmt(st[st.statistic_used]) + ' (' + st.statistic_used + ' of ' +
        fmt(st.count) + '; p50 ' + fmt(st.p50) + ', min ' + fmt(st.min) + ', max ' + fmt(st.max) + ')' : null],
      ['messages per work unit', ob.messages_per_work_unit], ['concurrent workers', ob.concurrent_workers],
      ['queue slope of the answer', ob.queue_slope]]));
    parent.appendChild(el('p', {'class': id && !id.reproduces ? 'flag' : 'note verdict', 'data-check': 'identity',
                                'data-ok': id ? (id.reproduces ? '1' : '0') : ''},
                          !id ? 'not checked (the collector exposes no service time, batch size and workers)' :
                          (id.reproduces ? 'Reproduces: ' : 'Does not reproduce, the mechanism is not understood: ') +
                          'predicted ' + rate(id.predicted) + ' against measured ' + rate(id.measured) + ' (' +
                          fmt(id.against) + '), off by ' + pct(id.error) + ' (tolerance ' +
                          pct(get(run, 'rules.identity_tolerance')) + ')'));
  }

  function ceilingServiceRate(parent, run, prefix) {
    var sr = run.service_rate;
    parent.appendChild(el('h3', null, 'Service rate: how fast the pipeline drains a backlog'));
    if (!sr) {
      parent.appendChild(el('p', {'class': 'note', 'data-check': 'service-rate'}, 'not measured'));
      return;
    }
    parent.appendChild(el('p', {'class': 'note verdict', 'data-check': 'service-rate'}, 'Service rate ' + rate(sr.rate) +
                          ': a burst of ' + rate(sr.per_device_burst_rate) + ' per device for ' + fmt(sr.burst_s) +
                          ' s, peak depth ' + fmt(sr.peak_depth) + ', drained in ' + fmt(sr.drain_s) + ' s (' +
                          fmt(sr.points) + ' points fitted)' + (sr.why ? '; ' + sr.why : '')));
    var cell = (run.cells || []).filter(function (c) {
      return typeof sr.cell === 'number' ? c.index === sr.cell : c.phase === 'service-rate';
    })[0];
    var name = prefix + '-drain';
    var title = 'The burst and its drain: queue depth, with the drain at the service rate';
    if (!cell || !(cell.samples || []).length) {
      missing(parent, name, title, 'no samples of the burst in this manifest');
      return;
    }
    var pts = cellDepths(run, cell, 'samples').concat(cellDepths(run, cell, 'settle'));
    var ds = [line('queue depth', pts, 0, {pointRadius: 1})];
    /* The drain drawn from the peak down at the fitted rate. */
    var peak = pts.reduce(function (a, p) { return p.y !== null && (!a || p.y > a.y) ? p : a; }, null);
    if (peak && typeof sr.rate === 'number' && sr.rate > 0) {
      ds.push(line('drain at ' + rate(sr.rate), [{x: peak.x, y: peak.y}, {x: peak.x + peak.y / sr.rate, y: 0}], 1,
                   {marks: true, borderWidth: 2, borderDash: [6, 3]}));
    }
    var ch = chart(parent, name, title, {type: 'line', data: {datasets: ds}, options: {parsing: false,
                   scales: {x: linAxis('seconds since the burst started'), y: linAxis('queue depth', {beginAtZero: true})}}});
    var drain = ch.data.datasets.filter(function (d) { return d.marks; })[0];
    ch.canvas.parentNode.setAttribute('data-fit', drain ? JSON.stringify(drain.data) : '');
  }

  function ceiling(parent, list) {
    list.forEach(function (run, i) {
      var prefix = 'ceiling' + (i ? '-' + i : '');
      var sec = el('section', {'class': 'ceiling', 'data-run': run.label});
      sec.appendChild(el('h2', null, run.label + ': ' + quantityName(get(run, 'result.quantity') || run.measured_quantity)));
      parent.appendChild(sec);
      var answer = answerCell(run);
      ceilingAnswer(sec, run);
      ceilingCells(sec, run, answer);
      ceilingQueues(sec, run, answer, prefix);
      ceilingRates(sec, run, answer, prefix);
      ceilingChecks(sec, run);
      ceilingServiceRate(sec, run, prefix);
    });
  }

  var TITLES = {'edit': 'edit-config', 'restconf': 'RESTCONF edits', 'mount': 'Mount storm',
                'notify': 'Notifications', 'snmp': 'SNMP collection', 'controller-mount': 'Controller mount',
                'reconcile': 'Reconcile: sent against received', 'ceiling': 'Collector ceiling'};
  var modes = [];
  runs.forEach(function (run, i) {
    run.index = i;
    if (modes.indexOf(run.mode) < 0) {
      modes.push(run.mode);
    }
  });
  document.title = 'fleetsim-stress report: ' + runs.map(label).join(', ');
  root.appendChild(el('h1', null, 'fleetsim-stress report'));
  root.appendChild(el('p', {'class': 'note'}, runs.length + ' run(s): ' + runs.map(function (r) {
    return r.label + ' (' + r.mode + ')';
  }).join(', ')));
  headline(root);
  parameters(root);
  modes.forEach(function (mode) {
    var list = runs.filter(function (r) { return r.mode === mode; });
    var sec = el('section', {id: 'mode-' + mode, 'data-mode': mode});
    sec.appendChild(el('h2', null, (TITLES[mode] || mode) + (list.length > 1 ? ' (' + list.length + ' runs overlaid)' : '')));
    root.appendChild(sec);
    switch (mode) {
    case 'edit':
    case 'restconf':
      editLike(sec, list, mode);
      break;
    case 'mount':
      mount(sec, list);
      break;
    case 'notify':
      notify(sec, list);
      break;
    case 'snmp':
      snmp(sec, list);
      break;
    case 'controller-mount':
      controllerMount(sec, list);
      break;
    case 'reconcile':
      reconcile(sec, list);
      break;
    case 'ceiling':
      ceiling(sec, list);
      break;
    }
  });
  document.body.setAttribute('data-charts', String(chartCount));
  document.body.setAttribute('data-ready', '1');
})();
