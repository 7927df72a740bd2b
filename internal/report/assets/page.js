// gantry's run report: draws the data of the page (script#gantry-data)
// as a component graph, a timeline, a summary and each component's
// details. Plain JavaScript, nothing fetched. Large runs stay quick: the
// graph draws only the boxes in view (and no text when zoomed out), the
// timeline only the rows in view, logs a few thousand lines at a time.
(function () {
  'use strict';

  var D = JSON.parse(document.getElementById('gantry-data').textContent);
  var comps = D.components;
  var isRun = D.kind === 'run';
  var byName = new Map();
  comps.forEach(function (c, i) { byName.set(c.name, i); });
  // Components have boxes in the graph; stack-level groups come after them.
  var nBoxes = 0;
  while (nBoxes < comps.length && !comps[nBoxes].group) nBoxes++;
  var incoming = comps.map(function () { return []; });
  var outgoing = comps.map(function () { return []; });
  D.edges.forEach(function (e, k) { outgoing[e.from].push(k); incoming[e.to].push(k); });
  var selected = -1;

  function $(id) { return document.getElementById(id); }
  function esc(s) {
    return String(s == null ? '' : s).replace(/[&<>"']/g, function (ch) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch];
    });
  }
  // runLength says how long the run took; an unfinished one's length is not
  // known: it runs still (live), or was killed and last heard of then.
  // warnedSteps are the steps that failed and the run went on (on_fail:
  // warn), each with its component: [component, step].
  function warnedSteps() {
    var out = [];
    comps.forEach(function (c) { (c.steps || []).forEach(function (s) { if (s.warning) out.push([c, s]); }); });
    return out;
  }
  function runLength() {
    if (D.status !== 'unfinished') return 'took ' + fmtDur(D.durationMs);
    if (D.live) return 'still running (gantry ' + D.live + '), ' + fmtDur(D.durationMs) + ' so far';
    if (D.elsewhere) return 'unfinished: its gantry ran on ' + D.elsewhere + ', which cannot be asked from here whether it still runs; last heard of ' + fmtDur(D.durationMs) + ' in';
    return 'ended without finishing (killed or crashed), last heard of ' + fmtDur(D.durationMs) + ' in';
  }
  function fmtDur(ms) {
    if (ms == null || ms < 0) return '–';
    if (ms < 1000) return ms + 'ms';
    var s = ms / 1000;
    if (s < 60) return s.toFixed(1) + 's';
    var m = Math.floor(s / 60);
    if (m < 60) return m + 'm' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
    return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm';
  }
  function at(ms) { return ms == null || ms < 0 ? '–' : '+' + fmtDur(ms); }
  function stClass(s) { return 'st-' + String(s || 'waiting').replace(/[^a-z-]/gi, ''); }
  function badge(s) { return '<span class="badge ' + stClass(s) + '">' + esc(s || 'waiting') + '</span>'; }
  function took(c) { return c.start >= 0 && c.end >= 0 ? c.end - c.start : -1; }
  function waited(c) { return c.start >= 0 && c.ready >= 0 ? c.start - c.ready : -1; }
  function debounce(fn, ms) {
    var t = 0;
    return function () { var a = arguments; clearTimeout(t); t = setTimeout(function () { fn.apply(null, a); }, ms); };
  }

  // ---------------------------------------------------------------- header
  function header() {
    var what = isRun ? 'run ' + (D.run || '') : 'plan, nothing run yet';
    $('h-title').innerHTML = esc(D.stack) + ' <span class="verb">' + esc(D.verb) + ' · ' + esc(what) + '</span> ' +
      (isRun ? badge(D.status) : '<span class="badge st-plan">plan</span>');
    var counts = new Map();
    comps.forEach(function (c) { if (!c.group) counts.set(c.status, (counts.get(c.status) || 0) + 1); });
    var facts = ['<span><b>' + nBoxes + '</b> component' + (nBoxes === 1 ? '' : 's') + '</span>'];
    counts.forEach(function (n, s) { facts.push('<span><b>' + n + '</b> ' + esc(s || 'waiting') + '</span>'); });
    var nWarned = warnedSteps().length;
    if (nWarned) facts.push('<span><b>' + nWarned + '</b> warning' + (nWarned === 1 ? '' : 's') + '</span>');
    if (isRun) {
      facts.push('<span>' + esc(runLength()) + '</span>');
      if (D.started) facts.push('<span>started ' + esc(new Date(D.started).toLocaleString()) + '</span>');
    }
    $('h-facts').innerHTML = facts.join('');
    document.title = D.stack + ' — ' + D.verb + (isRun ? ' ' + D.status : ' plan') + ' — gantry';
    if (!isRun) $('tab-timeline').hidden = true;
  }

  // ----------------------------------------------------------------- tabs
  function showTab(name) {
    Array.prototype.forEach.call(document.querySelectorAll('#tabs button'), function (b) {
      b.classList.toggle('on', b.dataset.tab === name);
    });
    Array.prototype.forEach.call(document.querySelectorAll('.pane'), function (p) {
      p.classList.toggle('on', p.id === name);
    });
    if (name === 'graph') graph.draw();
    if (name === 'timeline') timeline.show();
    if (name === 'summary') summary();
  }

  // ---------------------------------------------------------------- graph
  var graph = (function () {
    var svg = $('graph-svg'), root = $('graph-root');
    var L = D.layout, W = L.boxW, H = L.boxH;
    var scale = 1, tx = 0, ty = 0, frame = 0, matches = null;
    var far = 0.45; // below this scale boxes are drawn without text

    function viewSize() { var r = svg.getBoundingClientRect(); return { w: r.width || 800, h: r.height || 600 }; }
    function apply() {
      root.setAttribute('transform', 'translate(' + tx + ',' + ty + ') scale(' + scale + ')');
      if (!frame) frame = requestAnimationFrame(function () { frame = 0; draw(); });
    }
    function fit() {
      var v = viewSize();
      if (!L.width || !L.height) return;
      scale = Math.min(v.w / L.width, v.h / L.height, 1.2);
      tx = (v.w - L.width * scale) / 2;
      ty = (v.h - L.height * scale) / 2;
      apply();
    }
    function centerOn(i, minScale) {
      var v = viewSize(), c = comps[i];
      if (minScale && scale < minScale) scale = minScale;
      tx = v.w / 2 - (c.x + W / 2) * scale;
      ty = v.h / 2 - (c.y + H / 2) * scale;
      apply();
    }
    function edgePath(e) {
      var a = comps[e.from], b = comps[e.to];
      var x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      var dx = Math.max(30, (x2 - x1) / 2);
      if (x2 <= x1) { // a tie within a folded layer: around the side
        return 'M' + x1 + ' ' + y1 + ' C' + (x1 + 40) + ' ' + y1 + ' ' + (x2 - 40) + ' ' + y2 + ' ' + x2 + ' ' + y2;
      }
      return 'M' + x1 + ' ' + y1 + ' C' + (x1 + dx) + ' ' + y1 + ' ' + (x2 - dx) + ' ' + y2 + ' ' + x2 + ' ' + y2;
    }
    function nodeClass(c, i) {
      var k = 'node ' + stClass(c.status);
      if (!c.mandatory) k += ' opt';
      if (c.critical) k += ' crit';
      if (i === selected) k += ' sel';
      if (matches && matches.has(i)) k += ' match';
      return k;
    }
    function subline(c) {
      var s = c.status || 'waiting';
      if (isRun && took(c) >= 0 && c.status !== 'skipped' && c.status !== 'unchanged') s += ' · ' + fmtDur(took(c));
      if (!isRun && c.reason) s += ' (' + c.reason + ')';
      if (c.steps.length > 1) s += ' · ' + c.steps.length + ' steps';
      return s;
    }
    function draw() {
      if (!$('graph').classList.contains('on')) return;
      var v = viewSize(), m = 300 / scale;
      var x0 = -tx / scale - m, y0 = -ty / scale - m, x1 = (v.w - tx) / scale + m, y1 = (v.h - ty) / scale + m;
      var inView = function (c) { return c.x + W >= x0 && c.x <= x1 && c.y + H >= y0 && c.y <= y1; };
      var isFar = scale < far;
      var out = [];
      var nearSel = selected >= 0 && selected < nBoxes;
      var labels = !isFar && D.edges.length < 1500;
      // With many ties, those of the selected component stand out.
      var faint = nearSel && D.edges.length > 200;
      for (var k = 0; k < D.edges.length; k++) {
        var e = D.edges[k], a = comps[e.from], b = comps[e.to];
        if (!inView(a) && !inView(b)) {
          // An edge crossing the view with both ends outside it.
          if (Math.max(a.x, b.x) < x0 || Math.min(a.x, b.x) > x1 || Math.max(a.y, b.y) < y0 || Math.min(a.y, b.y) > y1) continue;
        }
        var hl = nearSel && (e.from === selected || e.to === selected);
        out.push('<path class="edge' + (e.weak ? ' weak' : '') + (e.critical ? ' crit' : '') + (hl ? ' hl' : faint ? ' faint' : '') +
          '" d="' + edgePath(e) + '"><title>' + esc(a.name + ' → ' + b.name + ': ' + e.label) + '</title></path>');
        if (labels && (hl || scale >= 0.8) && e.label) {
          var lx = (a.x + W + b.x) / 2, ly = (a.y + b.y + H) / 2 - 3;
          out.push('<text class="edge-label" text-anchor="middle" x="' + lx + '" y="' + ly + '">' + esc(clip(e.label, 20)) + '</text>');
        }
      }
      for (var i = 0; i < nBoxes; i++) {
        var c = comps[i];
        if (!inView(c)) continue;
        if (isFar) {
          out.push('<rect class="' + nodeClass(c, i) + '" data-i="' + i + '" x="' + c.x + '" y="' + c.y + '" width="' + W +
            '" height="' + H + '" rx="6"><title>' + esc(c.name + ': ' + (c.status || '')) + '</title></rect>');
          continue;
        }
        out.push('<g class="' + nodeClass(c, i) + '" data-i="' + i + '" data-name="' + esc(c.name) + '" transform="translate(' + c.x + ',' + c.y + ')">' +
          '<rect width="' + W + '" height="' + H + '" rx="6"></rect>' +
          '<text x="10" y="19">' + esc(clip(c.name, 26)) + '</text>' +
          '<text class="sub" x="10" y="36">' + esc(clip(subline(c), 30)) + '</text>' +
          '<title>' + esc(c.name + '\n' + subline(c) + (c.why ? '\n' + c.why : '')) + '</title></g>');
      }
      root.innerHTML = out.join('');
    }
    function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }
    function zoomAt(f, px, py) {
      var ns = Math.max(0.02, Math.min(4, scale * f));
      tx = px - (px - tx) * ns / scale;
      ty = py - (py - ty) * ns / scale;
      scale = ns;
      apply();
    }
    function legend() {
      var seen = [];
      comps.forEach(function (c) { if (!c.group && seen.indexOf(c.status) < 0) seen.push(c.status); });
      var items = seen.map(function (s) { return '<span><i class="' + stClass(s) + '"></i>' + esc(s || 'waiting') + '</span>'; });
      items.push('<span>dashed box: optional</span>');
      if (isRun && D.critical.length) items.push('<span style="color:var(--crit)">orange: critical path</span>');
      if (D.reduced) items.push('<span>' + D.reduced + (D.reduced === 1 ? ' tie' : ' ties') + ' implied by longer paths not drawn</span>');
      $('graph-legend').innerHTML = items.join('');
    }
    function init() {
      legend();
      svg.classList.toggle('crit-on', isRun);
      $('show-critical').checked = isRun;
      $('show-critical').parentNode.hidden = !isRun;
      var drag = null;
      svg.addEventListener('pointerdown', function (ev) {
        drag = { x: ev.clientX, y: ev.clientY, tx: tx, ty: ty, moved: false };
        svg.setPointerCapture(ev.pointerId);
      });
      svg.addEventListener('pointermove', function (ev) {
        if (!drag) return;
        var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
        if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        drag.moved = true;
        svg.classList.add('dragging');
        tx = drag.tx + dx; ty = drag.ty + dy;
        apply();
      });
      svg.addEventListener('pointerup', function (ev) {
        var d = drag;
        drag = null;
        svg.classList.remove('dragging');
        if (d && !d.moved) {
          var t = document.elementFromPoint(ev.clientX, ev.clientY);
          var n = t && t.closest ? t.closest('[data-i]') : null;
          if (n) select(+n.getAttribute('data-i'), 'graph');
        }
      });
      svg.addEventListener('wheel', function (ev) {
        ev.preventDefault();
        var r = svg.getBoundingClientRect();
        zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
      }, { passive: false });
      $('zoom-in').onclick = function () { var v = viewSize(); zoomAt(1.4, v.w / 2, v.h / 2); };
      $('zoom-out').onclick = function () { var v = viewSize(); zoomAt(1 / 1.4, v.w / 2, v.h / 2); };
      $('zoom-fit').onclick = fit;
      $('show-critical').onchange = function () { svg.classList.toggle('crit-on', this.checked); };
      window.addEventListener('resize', debounce(draw, 100));
      fit();
    }
    function setMatches(set) {
      matches = set;
      svg.classList.toggle('searching', !!set);
      draw();
    }
    return { init: init, draw: draw, fit: fit, centerOn: centerOn, setMatches: setMatches, scale: function () { return scale; } };
  })();

  // ------------------------------------------------------------- timeline
  var timeline = (function () {
    var ROW = 22, NAME = 230, rows = [], expanded = new Set(), built = false;
    var scroll = $('tl-scroll'), space = $('tl-space'), box = $('tl-rows'), axis = $('tl-axis');
    var total = Math.max(D.durationMs || 0, 1);

    function trackWidth() {
      var z = +$('tl-zoom').value || 1;
      return Math.max(300, (scroll.clientWidth - NAME - 20) * z);
    }
    function order() {
      var idx = comps.map(function (c, i) { return i; });
      idx.sort(function (a, b) {
        var sa = comps[a].start < 0 ? Infinity : comps[a].start, sb = comps[b].start < 0 ? Infinity : comps[b].start;
        return sa - sb || a - b;
      });
      return idx;
    }
    function rebuild() {
      var all = $('tl-steps').checked, onlyCrit = $('tl-critical').checked;
      rows = [];
      order().forEach(function (i) {
        var c = comps[i];
        if (onlyCrit && !c.critical) return;
        rows.push({ c: i, s: -1 });
        if (all || expanded.has(i)) {
          c.steps.forEach(function (s, k) { if (!onlyCrit || s.critical) rows.push({ c: i, s: k }); });
        }
      });
      space.style.height = rows.length * ROW + 'px';
      var tw = trackWidth();
      space.style.width = axis.style.width = (NAME + tw) + 'px';
      ticks(tw);
      var ran = comps.filter(function (c) { return c.start >= 0; }).length;
      $('tl-note').textContent = rows.length + ' rows · ' + ran + ' of ' + comps.length + ' ran · ' + runLength() +
        (D.critical.length ? ' · critical path: ' + D.critical.length + ' component' + (D.critical.length === 1 ? '' : 's') : '');
      render();
    }
    function ticks(tw) {
      var steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
      var want = total / Math.max(2, tw / 110), step = steps[steps.length - 1];
      for (var i = 0; i < steps.length; i++) if (steps[i] >= want) { step = steps[i]; break; }
      var out = ['<div class="corner">component · waiting ┄ running ▬</div>'];
      for (var t = 0; t <= total; t += step) {
        out.push('<div class="tick" style="left:' + (NAME + t / total * tw) + 'px">' + fmtDur(t) + '</div>');
      }
      axis.innerHTML = out.join('');
    }
    function bar(x, c, tw) {
      var h = '';
      if (x.start < 0) return '<span class="tl-label" style="left:4px">' + esc(x.status || 'did not run') + '</span>';
      var l = x.start / total * tw, w = Math.max(2, (x.end - x.start) / total * tw);
      if (x.ready >= 0 && x.start > x.ready) {
        var wl = x.ready / total * tw;
        h += '<div class="tl-wait" style="left:' + wl + 'px;width:' + Math.max(1, l - wl) + 'px" title="waited ' + fmtDur(x.start - x.ready) + ' after it was ready"></div>';
      }
      h += '<div class="tl-bar ' + stClass(x.status || c.status) + (x.critical ? ' crit' : '') + '" style="left:' + l + 'px;width:' + w + 'px"></div>';
      h += '<span class="tl-label" style="left:' + (l + w + 4) + 'px">' + fmtDur(x.end - x.start) + '</span>';
      return h;
    }
    function render() {
      var tw = trackWidth();
      var top = Math.max(0, scroll.scrollTop - 24), first = Math.floor(top / ROW);
      var last = Math.min(rows.length, first + Math.ceil(scroll.clientHeight / ROW) + 20);
      var out = [];
      for (var r = Math.max(0, first - 10); r < last; r++) {
        var row = rows[r], c = comps[row.c];
        if (row.s < 0) {
          var caret = c.steps.length ? (expanded.has(row.c) || $('tl-steps').checked ? '▾' : '▸') : '';
          var tip = c.name + ': ' + (c.status || '') + (c.start >= 0 ? ' · ready ' + at(c.ready) + ', started ' + at(c.start) +
            ', waited ' + fmtDur(waited(c)) + ', ran ' + fmtDur(took(c)) : '');
          out.push('<div class="tl-row' + (row.c === selected ? ' sel' : '') + '" data-c="' + row.c + '" style="top:' + r * ROW + 'px" title="' + esc(tip) + '">' +
            '<div class="tl-name"><span class="caret" data-toggle="' + row.c + '">' + caret + '</span>' + esc(c.name) + '</div>' +
            '<div class="tl-track" style="width:' + tw + 'px">' + bar(c, c, tw) + '</div></div>');
        } else {
          var s = c.steps[row.s];
          out.push('<div class="tl-row step" data-c="' + row.c + '" style="top:' + r * ROW + 'px" title="' + esc(s.title + ': ' + (s.status || '') +
            (s.reason ? ' — ' + s.reason : '')) + '"><div class="tl-name">' + esc(s.title) + '</div>' +
            '<div class="tl-track" style="width:' + tw + 'px">' + bar(s, c, tw) + '</div></div>');
        }
      }
      box.innerHTML = out.join('');
    }
    function show() {
      if (!built) {
        built = true;
        $('tl-steps').checked = comps.length <= 40;
        scroll.addEventListener('scroll', function () { requestAnimationFrame(render); });
        $('tl-steps').onchange = rebuild;
        $('tl-critical').onchange = rebuild;
        $('tl-zoom').onchange = rebuild;
        box.addEventListener('click', function (ev) {
          var t = ev.target.closest('[data-toggle]');
          if (t) {
            var i = +t.getAttribute('data-toggle');
            if (expanded.has(i)) expanded.delete(i); else expanded.add(i);
            rebuild();
            return;
          }
          var r = ev.target.closest('[data-c]');
          if (r) select(+r.getAttribute('data-c'), 'timeline');
        });
        window.addEventListener('resize', debounce(function () { if ($('timeline').classList.contains('on')) rebuild(); }, 100));
      }
      rebuild();
    }
    // reveal scrolls the row of component i into view.
    function reveal(i) {
      if (!built) return;
      for (var r = 0; r < rows.length; r++) {
        if (rows[r].c === i && rows[r].s < 0) {
          var top = r * ROW;
          if (top < scroll.scrollTop || top > scroll.scrollTop + scroll.clientHeight - 3 * ROW) scroll.scrollTop = Math.max(0, top - scroll.clientHeight / 3);
          break;
        }
      }
      render();
    }
    return { show: show, reveal: reveal, render: function () { if (built) render(); } };
  })();

  // -------------------------------------------------------------- summary
  var summaryDone = false;
  function summary() {
    if (summaryDone) return;
    summaryDone = true;
    var h = [];
    if (isRun) {
      h.push('<h3>Run</h3><p>' + badge(D.status) + ' ' + esc(D.verb) + ' of <b>' + esc(D.stack) + '</b>, run ' + esc(D.run) +
        (D.started ? ', started ' + esc(new Date(D.started).toLocaleString()) : '') + ', ' + esc(runLength()) + '.</p>' +
        (D.why ? '<p class="why">The run failed: ' + esc(D.why) + '</p>' : ''));
      var failed = comps.filter(function (c) { return c.status === 'failed'; });
      if (failed.length) {
        h.push('<h3>Failed</h3><table><tr><th>component</th><th>why</th></tr>');
        failed.forEach(function (c) {
          h.push('<tr><td>' + link(c.name) + (!c.group && !c.mandatory ? ' <span class="tag">optional: tolerated</span>' : '') +
            '</td><td><code>' + esc(c.why) + '</code></td></tr>');
        });
        h.push('</table>');
      }
      // Steps that failed and the run went on (on_fail: warn): the
      // terminal said so, one line each, as it went.
      var warned = warnedSteps();
      if (warned.length) {
        h.push('<h3>Warnings</h3><table><tr><th>component</th><th>step</th><th>warning</th></tr>');
        warned.forEach(function (w) {
          h.push('<tr><td>' + link(w[0].name) + '</td><td>' + esc(w[1].title) + '</td><td><code>' + esc(w[1].warning) + '</code></td></tr>');
        });
        h.push('</table>');
      }
      if (D.critical.length) {
        h.push('<h3>Critical path</h3><p class="muted">The chain of components that decided how long the run took: each waited for the one before it.</p><table><tr><th>component</th><th>ready</th><th>waited</th><th>ran</th><th>ended</th></tr>');
        D.critical.forEach(function (i) {
          var c = comps[i];
          h.push('<tr><td>' + link(c.name) + '</td><td>' + at(c.ready) + '</td><td>' + fmtDur(waited(c)) + '</td><td>' + fmtDur(took(c)) + '</td><td>' + at(c.end) + '</td></tr>');
        });
        h.push('</table>');
      }
      if (D.summary) h.push('<h3>Summary</h3><pre class="summary">' + esc(D.summary) + '</pre>');
    }
    h.push('<h3>' + (isRun ? 'What the plan said, and why' : 'What would run, and why') + '</h3><table><tr><th>component</th><th>action</th><th>why</th><th>runs after</th></tr>');
    comps.forEach(function (c, i) {
      if (c.group) return;
      var after = incoming[i].map(function (k) { var e = D.edges[k]; return link(comps[e.from].name) + ' <span class="muted">(' + esc(e.label) + ')</span>'; });
      h.push('<tr><td>' + link(c.name) + (c.mandatory ? '' : ' <span class="tag">optional</span>') + '</td><td>' + badge(c.action || c.verb) + '</td><td>' +
        esc(c.reason) + '</td><td>' + (after.join(', ') || '<span class="muted">nothing</span>') + '</td></tr>');
    });
    h.push('</table>');
    if (D.orphans && D.orphans.length) {
      h.push('<h3>Orphans</h3><p>In the state, no longer in the stack, left alone: ' + D.orphans.map(esc).join(', ') + '</p>');
    }
    h.push('<h3>Stack parameters</h3>' + paramsTable(D.params, true));
    $('summary').innerHTML = h.join('');
  }
  function link(name) { return '<a data-go="' + esc(name) + '">' + esc(name) + '</a>'; }
  function paramsTable(ps, qualified) {
    if (!D.paramsKept) return '<p class="empty">' + (D.status === 'unfinished' ?
      (D.live ? 'This run has kept no parameters yet: a run keeps them when it ends.' : 'This run kept no parameters: a run keeps them when it ends, and its gantry was gone before.') :
      'This run kept no parameters (it was made by an older gantry).') + '</p>';
    if (!ps.length) return '<p class="empty">None.</p>';
    var h = ['<table><tr><th>name</th>' + (qualified ? '<th>component</th>' : '') + '<th>value</th><th>source</th></tr>'];
    ps.forEach(function (p) {
      h.push('<tr><td class="mono">' + esc(p.name) + '</td>' + (qualified ? '<td>' + esc(p.component) + '</td>' : '') +
        '<td class="mono' + (p.secret ? ' secret' : '') + '">' + esc(p.value) + '</td><td class="mono">' + esc(p.source) + '</td></tr>');
    });
    h.push('</table>');
    return h.join('');
  }

  // -------------------------------------------------------------- details
  var LOG_PAGE = 3000;
  function select(i, from) {
    if (i < 0 || i >= comps.length) return;
    selected = i;
    details(i);
    if (from !== 'graph' && i < nBoxes) graph.centerOn(i, 0.5);
    graph.draw();
    if (from === 'timeline') timeline.render(); else timeline.reveal(i);
    if (history.replaceState) history.replaceState(null, '', '#' + encodeURIComponent(comps[i].name));
  }
  function details(i) {
    var c = comps[i], h = [];
    h.push('<h2>' + esc(c.name) + ' ' + badge(c.status) + (c.group ? '<span class="tag">stack group</span>' : c.mandatory ? '<span class="tag">mandatory</span>' : '<span class="tag">optional</span>') +
      (c.critical && isRun ? '<span class="tag crit">critical path</span>' : '') + '</h2>');
    if (c.why) h.push('<div class="why">' + esc(c.why) + '</div>');
    // The lines that say why it failed come first; for the others they
    // head the log.
    if (isRun && c.status === 'failed') h.push('<div id="failing-area"></div>');
    h.push('<dl class="facts">');
    if (c.up) h.push('<dt>nested in</dt><dd>' + esc(c.up.split('.').map(function (_, k, a) { return a.slice(0, k + 1).join('.'); }).join(' › ')) + ' <span class="muted">(nested stack, up to ' + esc(c.up.indexOf('.') < 0 ? D.stack : c.up.slice(0, c.up.lastIndexOf('.'))) + ')</span></dd>');
    if (c.action) h.push('<dt>plan</dt><dd>' + esc(c.action) + (c.reason ? ' — ' + esc(c.reason) : '') + '</dd>');
    if (isRun) {
      h.push('<dt>ready</dt><dd>' + at(c.ready) + '</dd><dt>started</dt><dd>' + at(c.start) + (waited(c) > 0 ? ' <span class="muted">(waited ' + fmtDur(waited(c)) + ' after it was ready)</span>' : '') +
        '</dd><dt>ran</dt><dd>' + fmtDur(took(c)) + '</dd>');
    }
    var after = incoming[i].map(function (k) { var e = D.edges[k]; return link(comps[e.from].name) + ' <span class="muted">(' + esc(e.label) + ')</span>'; });
    var before = outgoing[i].map(function (k) { var e = D.edges[k]; return link(comps[e.to].name) + ' <span class="muted">(' + esc(e.label) + ')</span>'; });
    if (!c.group) {
      h.push('<dt>runs after</dt><dd>' + (after.join(', ') || '<span class="muted">nothing</span>') + '</dd>');
      h.push('<dt>before</dt><dd>' + (before.join(', ') || '<span class="muted">nothing</span>') + '</dd>');
    }
    h.push('</dl>');
    h.push('<h3>Steps</h3>');
    if (!c.steps.length) h.push('<p class="empty">No steps people see.</p>');
    else {
      h.push('<table><tr><th>step</th>' + (isRun ? '<th>status</th><th>waited</th><th>ran</th>' : '<th>kind</th>') + '</tr>');
      c.steps.forEach(function (s) {
        h.push('<tr><td>' + esc(s.title) + (s.critical && isRun ? ' <span class="tag crit">critical</span>' : '') +
          (s.reason ? '<div class="muted">' + esc(s.reason) + '</div>' : '') + (s.warning ? '<div class="muted">warning: ' + esc(s.warning) + '</div>' : '') + (s.info ? '<div class="muted">info: ' + esc(s.info) + '</div>' : '') + '</td>' +
          (isRun ? '<td>' + (s.status ? badge(s.status) : '<span class="muted">not reached</span>') + '</td><td>' + fmtDur(s.start >= 0 && s.ready >= 0 ? s.start - s.ready : -1) +
            '</td><td>' + fmtDur(s.start >= 0 ? s.end - s.start : -1) + '</td>' : '<td>' + esc(s.kind) + '</td>') + '</tr>');
      });
      h.push('</table>');
    }
    h.push('<h3>Parameters</h3>');
    if (c.params.length > 10) h.push('<input class="filter" id="param-filter" type="search" placeholder="Filter parameters">');
    h.push('<div id="param-table">' + paramsTable(c.params, false) + '</div>');
    if (isRun) {
      h.push('<h3>Outputs</h3>');
      if (!c.outputs.length) h.push('<p class="empty">None.</p>');
      else {
        h.push('<table><tr><th>name</th><th>value</th></tr>');
        c.outputs.forEach(function (o) { h.push('<tr><td class="mono">' + esc(o.name) + '</td><td class="mono' + (o.secret ? ' secret' : '') + '">' + esc(o.value) + '</td></tr>'); });
        h.push('</table>');
      }
      h.push('<h3>Log</h3>' + (c.status === 'failed' ? '' : '<div id="failing-area"></div>') + '<div id="log-area"></div>');
    }
    $('details').innerHTML = h.join('');
    var pf = $('param-filter');
    if (pf) {
      pf.oninput = function () {
        var q = pf.value.toLowerCase();
        $('param-table').innerHTML = paramsTable(c.params.filter(function (p) {
          return !q || (p.name + ' ' + p.value + ' ' + p.source).toLowerCase().indexOf(q) >= 0;
        }), false);
      };
    }
    if (isRun) logView(c);
  }

  function splitLine(line) {
    var sp = line.indexOf(' ');
    if (sp === 24 && line.charAt(10) === 'T') return { t: line.slice(11, 23), x: line.slice(sp + 1) };
    return { t: '', x: line };
  }
  function lineHTML(n, line, bad, q) {
    var p = splitLine(line), x = q ? mark(p.x, q) : esc(p.x);
    return '<div class="ln' + (bad ? ' bad' : '') + '" data-n="' + n + '"><span class="n">' + n + '</span><span class="t">' + esc(p.t) + '</span><span>' + x + '</span></div>';
  }
  // mark escapes text for HTML with the places that hold q marked.
  function mark(text, q) {
    var lt = text.toLowerCase(), lq = q.toLowerCase(), out = '', from = 0, k;
    while (lq && (k = lt.indexOf(lq, from)) >= 0) {
      out += esc(text.slice(from, k)) + '<mark>' + esc(text.slice(k, k + q.length)) + '</mark>';
      from = k + q.length;
    }
    return out + esc(text.slice(from));
  }
  // lineNumber is the number in the whole log of the k-th kept line.
  function lineNumber(log, k) { return log.cut && k >= log.cutAt ? k + 1 + log.cut : k + 1; }
  function logView(c, q, goTo) {
    var area = $('log-area'), log = c.log;
    if (!log || !log.total) { area.innerHTML = '<p class="empty">Nothing was logged.</p>'; return; }
    var bad = new Set((log.failing || []).map(function (f) { return f.n; }));
    var h = [], fh = [];
    if (log.failing && log.failing.length) {
      fh.push('<div class="failing" id="failing"><h4>' + log.failing.length + ' failing line' + (log.failing.length > 1 ? 's' : '') +
        (c.status === 'failed' ? ' in the log' : ' (the component did not fail)') + '</h4><div class="log">');
      log.failing.forEach(function (f) { fh.push(lineHTML(f.n, f.t, true, q)); });
      fh.push('</div></div>');
    }
    $('failing-area').innerHTML = fh.join('');
    h.push('<input class="filter" id="log-filter" type="search" placeholder="Search this log (' + log.total + ' lines)" value="' + esc(q || '') + '">');
    h.push('<div class="log" id="log-lines"></div>');
    area.innerHTML = h.join('');
    var shown = 0, lines = $('log-lines');
    var matching = q ? log.lines.map(function (l, k) { return k; }).filter(function (k) { return log.lines[k].toLowerCase().indexOf(q.toLowerCase()) >= 0; }) : null;
    function more() {
      var out = [], list = matching, end = Math.min((list ? list.length : log.lines.length), shown + LOG_PAGE);
      for (var j = shown; j < end; j++) {
        var k = list ? list[j] : j, n = lineNumber(log, k);
        if (!list && log.cut && k === log.cutAt) out.push('<div class="cut">… ' + log.cut + ' lines left out of the report; gantry logs ' + esc(D.run) + ' -c ' + esc(c.name) + ' shows them</div>');
        out.push(lineHTML(n, log.lines[k], bad.has(n), q));
      }
      shown = end;
      var old = lines.querySelector('.more');
      if (old) old.remove();
      lines.insertAdjacentHTML('beforeend', out.join(''));
      var left = (list ? list.length : log.lines.length) - shown;
      if (left > 0) lines.insertAdjacentHTML('beforeend', '<div class="more"><a id="log-more">show ' + Math.min(left, LOG_PAGE) + ' more lines (' + left + ' left)</a></div>');
      if (list && !list.length) lines.innerHTML = '<div class="cut">No line holds “' + esc(q) + '”.</div>';
    }
    more();
    lines.addEventListener('click', function (ev) { if (ev.target.id === 'log-more') more(); });
    $('log-filter').oninput = debounce(function () { logView(c, $('log-filter').value, null); $('log-filter').focus(); }, 200);
    var fl = $('failing');
    if (fl) fl.addEventListener('click', function (ev) {
      var ln = ev.target.closest('[data-n]');
      if (ln) scrollToLine(c, +ln.getAttribute('data-n'));
    });
    if (goTo) scrollToLine(c, goTo);
  }
  function scrollToLine(c, n) {
    var lines = $('log-lines');
    var el = lines.querySelector('[data-n="' + n + '"]');
    while (!el && $('log-more')) { $('log-more').click(); el = lines.querySelector('[data-n="' + n + '"]'); }
    if (!el) return;
    el.classList.add('flash');
    lines.scrollTop = el.offsetTop - lines.offsetTop - 40;
    el.scrollIntoView({ block: 'nearest' });
  }

  // --------------------------------------------------------------- search
  function search(q) {
    var res = $('search-results');
    q = q.trim();
    if (!q) { res.hidden = true; graph.setMatches(null); return; }
    var lq = q.toLowerCase(), names = [], set = new Set(), hits = [], MAXHITS = 60;
    comps.forEach(function (c, i) {
      if (c.name.toLowerCase().indexOf(lq) >= 0) { names.push(i); if (i < nBoxes) set.add(i); }
    });
    var total = 0;
    if (isRun) {
      comps.forEach(function (c, i) {
        if (!c.log) return;
        c.log.lines.forEach(function (l, k) {
          if (l.toLowerCase().indexOf(lq) >= 0) {
            total++;
            if (hits.length < MAXHITS) hits.push({ c: i, n: lineNumber(c.log, k), l: splitLine(l).x });
          }
        });
      });
    }
    var h = ['<h4>Components (' + names.length + ')</h4>'];
    if (!names.length) h.push('<div class="none">none</div>');
    names.slice(0, 30).forEach(function (i) {
      h.push('<div class="hit" data-c="' + i + '">' + mark(comps[i].name, q) + ' ' + badge(comps[i].status) + '</div>');
    });
    if (names.length > 30) h.push('<div class="none">and ' + (names.length - 30) + ' more, outlined in the graph</div>');
    if (isRun) {
      h.push('<h4>Log lines (' + total + ')</h4>');
      if (!hits.length) h.push('<div class="none">none</div>');
      hits.forEach(function (x) {
        h.push('<div class="hit" data-c="' + x.c + '" data-n="' + x.n + '"><b>' + esc(comps[x.c].name) + '</b>:' + x.n + ' <code>' + mark(x.l, q) + '</code></div>');
      });
      if (total > hits.length) h.push('<div class="none">and ' + (total - hits.length) + ' more lines</div>');
    }
    res.innerHTML = h.join('');
    res.hidden = false;
    graph.setMatches(set);
  }
  function initSearch() {
    var input = $('search'), res = $('search-results');
    input.addEventListener('input', debounce(function () { search(input.value); }, 150));
    input.addEventListener('keydown', function (ev) {
      if (ev.key === 'Escape') { input.value = ''; search(''); input.blur(); }
      if (ev.key === 'Enter') {
        var first = res.querySelector('.hit');
        if (first) first.click();
      }
    });
    res.addEventListener('click', function (ev) {
      var hit = ev.target.closest('.hit');
      if (!hit) return;
      var i = +hit.getAttribute('data-c'), n = hit.getAttribute('data-n');
      res.hidden = true;
      select(i, 'search');
      if (n && isRun) logView(comps[i], null, +n);
    });
    document.addEventListener('keydown', function (ev) {
      if (ev.key === '/' && document.activeElement !== input && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) {
        ev.preventDefault();
        input.focus();
      }
    });
    document.addEventListener('click', function (ev) {
      if (!ev.target.closest('#search-box')) res.hidden = true;
    });
  }

  // ----------------------------------------------------------------- init
  function firstToShow() {
    var h = decodeURIComponent(location.hash.slice(1));
    if (h && byName.has(h)) return byName.get(h);
    for (var i = 0; i < comps.length; i++) if (comps[i].status === 'failed') return i;
    return -1;
  }
  header();
  Array.prototype.forEach.call(document.querySelectorAll('#tabs button'), function (b) {
    b.addEventListener('click', function () { showTab(b.dataset.tab); });
  });
  document.body.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('[data-go]') : null;
    if (a) { ev.preventDefault(); showTab('graph'); select(byName.get(a.getAttribute('data-go')), 'link'); }
  });
  graph.init();
  initSearch();
  var first = firstToShow();
  if (first >= 0) { selected = first; details(first); graph.draw(); }
  else $('details').innerHTML = '<p class="empty">' + (comps.length ? 'Click a component to see ' + (isRun ? 'its steps, parameters, outputs and log.' : 'its steps and parameters.') : 'The plan has no components.') + '</p>';
  document.body.setAttribute('data-ready', '1');
  if (window.performance && performance.mark) performance.mark('gantry-ready');
  window.gantryReport = {
    select: function (name) { if (byName.has(name)) select(byName.get(name), 'api'); },
    selected: function () { return selected >= 0 ? comps[selected].name : ''; },
    scale: graph.scale,
    data: D
  };
})();
