(function () {
  'use strict';
  // cuda2tile report viewer. Every string from the data is written through esc(); no inline
  // event handlers (the page's Content-Security-Policy allows only this script).
  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function esc(s) { return String(s === null || s === undefined ? '' : s).replace(/[&<>"']/g, function (c) { return ESC[c]; }); }
  function cls(s) { return String(s).replace(/[^A-Za-z0-9_-]/g, ''); }
  function $(id) { return document.getElementById(id); }

  var INDEX = JSON.parse($('c2t-index').textContent);
  var FORMS = INDEX.forms || ['tile', 'portable', 'simt', 'hybrid', 'unsupported'];
  var SOURCE = INDEX.source || 'CUDA';   // what the kernels were converted from (an ONNX model's graph listing)
  var SEVS = ['error', 'warning', 'note'];
  var K = INDEX.kernels, F = INDEX.files, CODES = INDEX.codes || {};
  K.forEach(function (k) {
    k.file = F[k.f].file;
    k.status = (k.check && k.check.status) || 'none';
    var seen = {}; k.codes = [];
    k.diags.forEach(function (d) { if (!seen[d.code]) { seen[d.code] = 1; k.codes.push(d.code); } });
  });
  F.forEach(function (f, fi) {
    f.index = fi;
    f.all = f.diags.slice();
    f.kernels.forEach(function (i) { f.all = f.all.concat(K[i].diags); });
    f.n = SEVS.map(function (s) { return f.all.filter(function (d) { return d.severity === s; }).length; });
  });

  var state = { text: '', form: '', check: '', diag: '', file: -1, sort: 'file', rev: false, limit: 2000 };
  var visible = [];       // kernel indices in the index table, in order
  var indexScroll = 0;

  // ---- syntax highlighting (per file, on first open) ----------------------------------------
  var CPP_KW = words('alignas alignof asm auto break case catch class const constexpr const_cast continue decltype default delete do dynamic_cast else enum explicit extern for friend goto if inline mutable namespace new noexcept operator private protected public register reinterpret_cast return sizeof static static_assert static_cast struct switch template this throw try typedef typename union using virtual volatile while true false nullptr');
  var CPP_TY = words('void bool char short int long float double signed unsigned size_t ptrdiff_t half __half __half2 __nv_bfloat16 __nv_bfloat162 dim3 float2 float3 float4 double2 int2 int3 int4 uint2 uint3 uint4 char4 uchar4 short2');
  var CUDA = words('threadIdx blockIdx blockDim gridDim warpSize');
  var PY_KW = words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False');
  var PY_BI = words('range len int float bool print min max abs tuple list dict isinstance');
  function words(s) { var o = {}; s.split(' ').forEach(function (w) { o[w] = 1; }); return o; }
  var CPP_RE = /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|(?![\s\S])))|("(?:\\[\s\S]|[^"\\\n])*"?|'(?:\\[\s\S]|[^'\\\n])*'?)|(^[ \t]*#[^\n]*)|(\b(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[uUlLfF]*\b)|([A-Za-z_]\w*)/gm;
  var PY_RE = /(#[^\n]*)|((?:\b[rRbBfFuU]{1,2})?(?:"""[\s\S]*?(?:"""|(?![\s\S]))|'''[\s\S]*?(?:'''|(?![\s\S]))|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))|(@[\w.]+)|(\b(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)j?\b)|(T\.\w+|[A-Za-z_]\w*)/g;
  function cppClass(m) {
    if (m[1]) return 'com'; if (m[2]) return 'str'; if (m[3]) return 'pp'; if (m[4]) return 'num';
    var w = m[5];
    if (CPP_KW[w]) return 'kw'; if (CPP_TY[w] || /^u?int\d+_t$/.test(w)) return 'ty';
    if (CUDA[w] || /^__\w+$/.test(w) || /^atomic[A-Z]/.test(w)) return 'cu';
    return '';
  }
  function pyClass(m) {
    if (m[1]) return /^#\s*(?:\S+:)?L\d+$/.test(m[1]) ? 'prov' : 'com';
    if (m[2]) return 'str'; if (m[3]) return 'dec'; if (m[4]) return 'num';
    var w = m[5];
    if (PY_KW[w]) return 'kw'; if (w.slice(0, 2) === 'T.') return 'cu'; if (PY_BI[w]) return 'fn';
    return '';
  }
  function highlight(text, re, classify) {
    var lines = [], cur = '', last = 0, m;
    function emit(s, c) {
      var parts = s.split('\n');
      for (var i = 0; i < parts.length; i++) {
        if (i > 0) { lines.push(cur); cur = ''; }
        if (parts[i]) cur += c ? '<span class="hl-' + c + '">' + esc(parts[i]) + '</span>' : esc(parts[i]);
      }
    }
    re.lastIndex = 0;
    while ((m = re.exec(text)) !== null) {
      if (m[0] === '') { re.lastIndex++; continue; }
      if (m.index > last) emit(text.slice(last, m.index), '');
      emit(m[0], classify(m));
      last = re.lastIndex;
    }
    emit(text.slice(last), '');
    lines.push(cur);
    return lines;
  }
  var blobs = {}, hls = {};
  function blob(fi) {
    if (!blobs[fi]) blobs[fi] = JSON.parse($('c2t-file-' + fi).textContent);
    return blobs[fi];
  }
  function hl(fi) {
    if (!hls[fi]) {
      var b = blob(fi);
      hls[fi] = {
        cuda: b.cuda === null ? [] : highlight(b.cuda, CPP_RE, cppClass),
        tl: b.tl === null ? [] : highlight(b.tl, PY_RE, pyClass),
        tlRaw: b.tl === null ? [] : b.tl.split('\n')
      };
    }
    return hls[fi];
  }

  // ---- index ----------------------------------------------------------------------------------
  function count(list, key) { var o = {}; list.forEach(function (x) { var v = key(x); o[v] = (o[v] || 0) + 1; }); return o; }
  function renderSummary() {
    var s = INDEX.summary;
    var pct = s.kernels ? Math.round(100 * s.converted / s.kernels) : 0;
    $('headline').textContent = s.kernels + ' kernels in ' + s.files + ' files \u00b7 ' + s.converted +
      ' converted (' + pct + '%) \u00b7 ' + INDEX.tool + ' ' + INDEX.version + ' \u00b7 ' + INDEX.generated;
    var checks = count(K, function (k) { return k.status; });
    var sev = [0, 0, 0];
    F.forEach(function (f) { for (var j = 0; j < 3; j++) sev[j] += f.n[j]; });
    var h = '<div class="cards">';
    h += card('kernels', s.kernels, 'data-set="form" data-value=""');
    h += card('converted', s.converted, '');
    FORMS.forEach(function (f) { h += card('<span class="form form-' + f + '">' + f + '</span>', s.forms[f] || 0, 'data-set="form" data-value="' + f + '"'); });
    Object.keys(checks).sort().forEach(function (c) { h += card('check ' + esc(c), checks[c], 'data-set="check" data-value="' + esc(c) + '"'); });
    SEVS.forEach(function (v, j) { h += card('<span class="sev-' + v + '">' + v + 's</span>', sev[j], 'data-set="diag" data-value="' + v + '"'); });
    h += '</div>';
    var codes = Object.keys(s.diagnostics || {});
    if (codes.length) {
      h += '<details open><summary>diagnostics by code</summary><table class="grid"><thead><tr><th>code</th><th class="num">count</th><th>severity</th><th>meaning</th><th>fix</th></tr></thead><tbody>';
      codes.forEach(function (c) {
        var e = CODES[c] || {};
        h += '<tr><td><a href="#" data-set="diag" data-value="code:' + esc(c) + '"><code>' + esc(c) + '</code></a></td><td class="num">' +
          esc(s.diagnostics[c]) + '</td><td class="sev-' + cls(e.severity || '') + '">' + esc(e.severity || '') + '</td><td>' +
          esc(e.title || '') + '</td><td class="fix">' + esc(e.fix || '') + '</td></tr>';
      });
      h += '</tbody></table></details>';
    }
    if (s.suppressed && Object.keys(s.suppressed).length) {
      h += '<p class="muted">suppressed (--suppress): ' + Object.keys(s.suppressed).map(function (c) { return esc(c) + ' \u00d7' + esc(s.suppressed[c]); }).join(', ') + '</p>';
    }
    $('summary').innerHTML = h;
  }
  function card(label, n, attrs) {
    return '<div class="card">' + (attrs ? '<button type="button" ' + attrs + '>' : '') + '<b>' + esc(n) + '</b>' + label + (attrs ? '</button>' : '') + '</div>';
  }
  function option(value, label, selected) {
    return '<option value="' + esc(value) + '"' + (selected ? ' selected' : '') + '>' + esc(label) + '</option>';
  }
  function renderFilterOptions() {
    var forms = count(K, function (k) { return k.form; });
    var h = option('', 'all (' + K.length + ')', !state.form);
    FORMS.forEach(function (f) { h += option(f, f + ' (' + (forms[f] || 0) + ')', state.form === f); });
    Object.keys(forms).forEach(function (f) { if (FORMS.indexOf(f) < 0) h += option(f, f + ' (' + forms[f] + ')', state.form === f); });
    $('f-form').innerHTML = h;
    var checks = count(K, function (k) { return k.status; });
    h = option('', 'all', !state.check);
    Object.keys(checks).sort().forEach(function (c) { h += option(c, c + ' (' + checks[c] + ')', state.check === c); });
    $('f-check').innerHTML = h;
    h = option('', 'all', !state.diag) + option('any', 'with any', state.diag === 'any') +
      option('none', 'without any', state.diag === 'none');
    SEVS.forEach(function (v) { h += option(v, 'with ' + v + 's', state.diag === v); });
    var codes = {};
    K.forEach(function (k) { k.codes.forEach(function (c) { codes[c] = (codes[c] || 0) + 1; }); });
    F.forEach(function (f) { f.diags.forEach(function (d) { if (!codes[d.code]) codes[d.code] = 0; }); });
    Object.keys(codes).sort().forEach(function (c) {
      var t = CODES[c] ? CODES[c].title : '';
      h += option('code:' + c, c + ' ' + t + ' (' + codes[c] + ' kernels)', state.diag === 'code:' + c);
    });
    $('f-diag').innerHTML = h;
    $('f-text').value = state.text;
    var chip = $('f-file');
    if (state.file >= 0) {
      chip.innerHTML = 'file: ' + esc(F[state.file].file) + '<button type="button" id="f-file-clear" title="show all files">\u00d7</button>';
      chip.classList.remove('hidden');
    } else {
      chip.innerHTML = ''; chip.classList.add('hidden');
    }
  }
  function diagMatch(diags) {
    var d = state.diag;
    if (!d) return true;
    if (d === 'any') return diags.length > 0;
    if (d === 'none') return diags.length === 0;
    if (d.slice(0, 5) === 'code:') { var c = d.slice(5); return diags.some(function (x) { return x.code === c; }); }
    return diags.some(function (x) { return x.severity === d; });
  }
  function kernelMatch(k) {
    if (state.file >= 0 && k.f !== state.file) return false;
    if (state.form && k.form !== state.form) return false;
    if (state.check && k.status !== state.check) return false;
    if (!diagMatch(k.diags)) return false;
    if (state.text) {
      var t = state.text.toLowerCase();
      if (k.kernel.toLowerCase().indexOf(t) < 0 && k.file.toLowerCase().indexOf(t) < 0) return false;
    }
    return true;
  }
  function fileMatch(f) {
    if (state.file >= 0 && f.index !== state.file) return false;
    if (state.text && f.file.toLowerCase().indexOf(state.text.toLowerCase()) < 0 &&
        !f.kernels.some(function (i) { return K[i].kernel.toLowerCase().indexOf(state.text.toLowerCase()) >= 0; })) return false;
    if (state.form && !f.kernels.some(function (i) { return K[i].form === state.form; })) return false;
    if (state.check && !f.kernels.some(function (i) { return K[i].status === state.check; })) return false;
    return diagMatch(f.all);
  }
  var SORTERS = {
    file: function (a, b) { return cmp(a.file, b.file) || a.line - b.line; },
    kernel: function (a, b) { return cmp(a.kernel, b.kernel) || cmp(a.file, b.file); },
    line: function (a, b) { return a.line - b.line || cmp(a.file, b.file); },
    form: function (a, b) { return FORMS.indexOf(a.form) - FORMS.indexOf(b.form) || SORTERS.file(a, b); },
    check: function (a, b) { return cmp(a.status, b.status) || SORTERS.file(a, b); },
    errors: function (a, b) { return b.n[0] - a.n[0] || SORTERS.file(a, b); },
    warnings: function (a, b) { return b.n[1] - a.n[1] || SORTERS.file(a, b); },
    notes: function (a, b) { return b.n[2] - a.n[2] || SORTERS.file(a, b); }
  };
  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }
  function renderKernels() {
    var list = K.filter(kernelMatch).sort(SORTERS[state.sort] || SORTERS.file);
    if (state.rev) list.reverse();
    visible = list.map(function (k) { return k.i; });
    var out = [], n = Math.min(list.length, state.limit);
    for (var j = 0; j < n; j++) {
      var k = list[j];
      out.push('<tr data-i="' + k.i + '"><td><a href="#f/' + k.f + '">' + esc(k.file) + '</a></td><td><a class="kernel-link" href="#k/' + k.i + '">' +
        esc(k.kernel) + '</a></td><td class="num">' + esc(k.line) + '</td><td><span class="form form-' + cls(k.form) + '">' + esc(k.form) +
        '</span></td><td><span class="status status-' + cls(k.status) + '">' + esc(k.status) + '</span>' +
        (k.check && k.check.inputs && k.status !== 'none' ? ' <span class="inputs" title="what the check ran on">' + esc(k.check.inputs) + '</span>' : '') +
        '</td><td class="num sev-error">' +
        (k.n[0] || '') + '</td><td class="num sev-warning">' + (k.n[1] || '') + '</td><td class="num sev-note">' + (k.n[2] || '') +
        '</td><td class="codes">' + k.codes.map(function (c) { return '<code>' + esc(c) + '</code>'; }).join('') + '</td></tr>');
    }
    document.querySelector('#kernels tbody').innerHTML = out.join('');
    $('more').innerHTML = list.length > n ? '<button type="button" id="show-all">show all ' + list.length + ' kernels</button>' : '';
    $('f-count').textContent = list.length + ' of ' + K.length + ' kernels';
    document.querySelectorAll('#kernels th[data-sort]').forEach(function (th) {
      th.classList.toggle('sorted', th.getAttribute('data-sort') === state.sort);
      th.classList.toggle('rev', th.getAttribute('data-sort') === state.sort && state.rev);
    });
  }
  function renderFiles() {
    var out = [];
    F.forEach(function (f, fi) {
      if (!fileMatch(f)) return;
      var ks = f.kernels.map(function (i) { return K[i]; });
      var conv = ks.filter(function (k) { return k.form !== 'unsupported' && k.form !== 'hybrid'; }).length;
      var forms = count(ks, function (k) { return k.form; });
      out.push('<tr data-f="' + fi + '"><td><a href="#f/' + fi + '">' + esc(f.file) + '</a></td><td class="num">' + ks.length +
        '</td><td class="num">' + conv + '</td><td>' + FORMS.filter(function (x) { return forms[x]; }).map(function (x) {
          return '<span class="form form-' + x + '">' + x + ' ' + forms[x] + '</span>'; }).join(' ') +
        '</td><td class="num sev-error">' + (f.n[0] || '') + '</td><td class="num sev-warning">' + (f.n[1] || '') +
        '</td><td class="num sev-note">' + (f.n[2] || '') + '</td><td class="num">' + esc(f.lines_in) + '</td><td class="num">' +
        esc(f.lines_out) + '</td><td class="num">' + esc(f.seconds) + '</td></tr>');
    });
    document.querySelector('#files tbody').innerHTML = out.join('');
  }
  function refresh() { renderFilterOptions(); renderKernels(); renderFiles(); }

  // ---- kernel view ----------------------------------------------------------------------------
  var mode = 'aligned';
  var CHECK_ORDER = ['status', 'inputs', 'launch', 'run', 'device', 'max_abs_err', 'max_rel_err', 'first_mismatch', 'seed', 'message'];
  function value(v) { return (v !== null && typeof v === 'object') ? JSON.stringify(v) : (v === null || v === undefined ? '\u2014' : String(v)); }
  function checkBox(check) {
    var keys = CHECK_ORDER.filter(function (k) { return k in check; });
    Object.keys(check).forEach(function (k) { if (keys.indexOf(k) < 0 && k !== 'file' && k !== 'kernel') keys.push(k); });
    var st = String(check.status || 'none').toLowerCase();
    var tone = /^(pass|passed|ok|equal)$/.test(st) ? ' check-good' : /^(fail|failed|mismatch|error)$/.test(st) ? ' check-bad' : '';
    var h = '<div class="box check' + tone + '" id="check"><b>Equivalence check</b><dl class="kv">';
    keys.forEach(function (k) { h += '<dt>' + esc(k) + '</dt><dd class="check-' + cls(k) + '">' + esc(value(check[k])) + '</dd>'; });
    if (!keys.length) h += '<dt>status</dt><dd>no check recorded</dd>';
    return h + '</dl></div>';
  }
  function diagItem(d, linked) {
    var e = CODES[d.code] || {};
    var where = d.here ? (linked ? '<a href="#" data-goto="' + esc(d.line) + '">line ' + esc(d.line) + '</a>' : 'line ' + esc(d.line)) :
      esc((d.where || '') + ':' + d.line);
    return '<li class="sev-' + cls(d.severity) + '"><b>' + esc(d.severity) + '</b> <code>' + esc(d.code) + '</code> ' + esc(e.title || '') +
      ': <span class="msg">' + esc(d.message) + '</span> \u2014 ' + where + (d.col ? ':' + esc(d.col) : '') +
      (e.fix ? '<div class="fix">fix: ' + esc(e.fix) + '</div>' : '') + '</li>';
  }
  function tagOf(line) { var m = /  # L(\d+)$/.exec(line || ''); return m ? +m[1] : 0; }
  function codeRow(h, c, t, first) {
    var cu = c ? (h.cuda[c - 1] || '') : null, tl = t ? (h.tl[t - 1] || '') : null;
    return '<tr class="row"' + (c && first ? ' id="L' + c + '"' : '') + ' data-c="' + c + '" data-t="' + t + '"><td class="ln">' + (c || '') +
      '</td><td class="cu' + (cu === null ? ' empty' : '') + '">' + (cu || '') + '</td><td class="ln">' + (t || '') +
      '</td><td class="tl' + (tl === null ? ' empty' : '') + '">' + (tl || '') + '</td></tr>';
  }
  function diagRow(d) {
    var e = CODES[d.code] || {};
    return '<tr class="diag sev-' + cls(d.severity) + '"><td class="ln">\u25b2</td><td colspan="3"><b>' + esc(d.severity) + '</b> <code>' + esc(d.code) +
      '</code> ' + esc(e.title || '') + ': ' + esc(d.message) + (d.col ? ' (column ' + esc(d.col) + ')' : '') + '</td></tr>';
  }
  function sideBySide(k) {
    var b = blob(k.f), h = hl(k.f), rows = b.views[String(k.i)] || [];
    var out = [], placed = {}, shown = {};
    var diags = k.diags.concat(F[k.f].diags).filter(function (d) { return d.here && d.line; });
    var at = {};
    diags.forEach(function (d) { (at[d.line] = at[d.line] || []).push(d); });
    if (mode === 'aligned') {
      rows.forEach(function (r) {
        if (typeof r === 'string') { out.push('<tr class="sec"><td colspan="4">' + esc(r) + '</td></tr>'); return; }
        var c = r[0], first = c && !shown[c];
        out.push(codeRow(h, c, r[1], first));
        if (c) shown[c] = 1;
        if (first && at[c]) { placed[c] = 1; at[c].forEach(function (d) { out.push(diagRow(d)); }); }
      });
      var rest = Object.keys(at).filter(function (l) { return !placed[l] && k.diags.indexOf(at[l][0]) >= 0; }).map(Number).sort(function (x, y) { return x - y; });
      rest.forEach(function (l) {
        out.push('<tr class="sec"><td colspan="4">diagnostic outside the kernel \u00b7 ' + esc(SOURCE) + ' line ' + l + '</td></tr>');
        for (var c = Math.max(1, l - 2); c <= Math.min(h.cuda.length, l + 2); c++) {
          out.push(codeRow(h, c, 0, !shown[c])); shown[c] = 1;
          if (c === l) at[l].forEach(function (d) { out.push(diagRow(d)); });
        }
      });
    } else {
      var ts = [];
      rows.forEach(function (r) { if (typeof r !== 'string' && r[1]) ts.push(r[1]); });
      ts.sort(function (x, y) { return x - y; });
      ts.forEach(function (t) {
        var c = tagOf(h.tlRaw[t - 1]);
        out.push(codeRow(h, c, t, c && !shown[c]));
        if (c) shown[c] = 1;
      });
    }
    if (!rows.length) out.push('<tr class="sec"><td colspan="4">no lines to show</td></tr>');
    var f = F[k.f];
    var head = '<thead><tr><th colspan="2">' + esc(SOURCE) + ' \u2014 ' + esc(f.file) + (b.cudaError ? ' (' + esc(b.cudaError) + ')' : '') +
      '</th><th colspan="2">TileLang \u2014 ' + esc(f.output || '') + (b.tlError ? ' (' + esc(b.tlError) + ')' : '') + '</th></tr></thead>';
    return '<table class="sbs" id="sbs"><colgroup><col class="ln"><col><col class="ln"><col></colgroup>' + head + '<tbody>' + out.join('') + '</tbody></table>';
  }
  function showKernel(i) {
    var k = K[i], f = F[k.f];
    var order = visible.indexOf(i) >= 0 ? visible : K.map(function (x) { return x.i; });
    var pos = order.indexOf(i);
    var prev = pos > 0 ? order[pos - 1] : null, next = pos < order.length - 1 ? order[pos + 1] : null;
    var h = '<div class="kernel-nav"><a href="#" id="back">\u2190 index</a>' +
      (prev !== null ? '<a href="#k/' + prev + '" id="prev">\u2191 previous: ' + esc(K[prev].kernel) + '</a>' : '') +
      (next !== null ? '<a href="#k/' + next + '" id="next">\u2193 next: ' + esc(K[next].kernel) + '</a>' : '') +
      '<span class="muted">' + (pos + 1) + ' of ' + order.length + ' \u00b7 keys: j/k next/previous, Esc index</span></div>';
    h += '<div class="kernel-title"><code id="kernel-name">' + esc(k.kernel) + '</code> <span class="form form-' + cls(k.form) + '">' + esc(k.form) +
      '</span> <span class="muted">' + esc(f.file) + ':' + esc(k.line) + ' \u2192 ' + esc(f.output || '') + '</span></div>';
    h += '<div class="reason">' + esc(k.reason) + '</div>';
    h += checkBox(k.check || {});
    if (k.diags.length) h += '<div class="box"><b>Diagnostics (' + k.diags.length + ')</b><ul class="diags">' + k.diags.map(function (d) { return diagItem(d, true); }).join('') + '</ul></div>';
    if (k.launches.length || k.params.length || k.instances.length) {
      h += '<details class="box"><summary>parameters, template instances and launch sites</summary>';
      if (k.params.length) h += '<p>parameters: ' + k.params.map(function (p) { return '<code>' + esc(p.type) + ' ' + esc(p.name) + '</code>'; }).join(', ') + '</p>';
      if (k.instances.length) h += '<p>template instances: ' + k.instances.map(function (a) { return '<code>&lt;' + esc(a.join(', ')) + '&gt;</code>'; }).join(' ') + '</p>';
      if (k.launches.length) {
        h += '<table class="grid"><thead><tr><th>line</th><th>caller</th><th>grid</th><th>block</th><th>shared</th><th>stream</th><th>args</th></tr></thead><tbody>';
        k.launches.forEach(function (l) {
          h += '<tr><td>' + esc(l.line) + '</td><td>' + esc(l.caller) + '</td><td><code>' + esc(l.grid) + '</code></td><td><code>' + esc(l.block) +
            '</code></td><td><code>' + esc(l.shared_bytes) + '</code></td><td><code>' + esc(l.stream) + '</code></td><td><code>' + esc((l.args || []).join(', ')) + '</code></td></tr>';
        });
        h += '</tbody></table>';
      }
      h += '</details>';
    }
    h += '<div class="toolbar">view: <button type="button" data-mode="aligned" class="' + (mode === 'aligned' ? 'on' : '') + '">aligned by ' + esc(SOURCE) + ' line</button>' +
      '<button type="button" data-mode="order" class="' + (mode === 'order' ? 'on' : '') + '">TileLang in order</button></div>';
    h += '<div id="sbs-wrap">' + sideBySide(k) + '</div>';
    var view = $('kernel-view');
    view.innerHTML = h;
    view.setAttribute('data-kernel', String(i));
    show('kernel-view');
    document.title = k.kernel + ' \u2014 cuda2tile report';
    window.scrollTo(0, 0);
  }
  function showFile(fi) {
    var f = F[fi];
    var h = '<div class="kernel-nav"><a href="#" id="back">\u2190 index</a><a href="#" data-filter-file="' + fi + '">show its kernels in the index</a></div>';
    h += '<div class="kernel-title"><code>' + esc(f.file) + '</code> <span class="muted">\u2192 ' + esc(f.output || '') + '</span></div>';
    h += '<p>' + f.kernels.length + ' kernels \u00b7 ' + esc(f.lines_in) + ' lines in \u00b7 ' + esc(f.lines_out) + ' lines out \u00b7 ' + esc(f.seconds) + ' s</p>';
    h += '<div class="box"><b>File diagnostics (' + f.diags.length + ')</b>' + (f.diags.length ? '<ul class="diags">' + f.diags.map(function (d) { return diagItem(d, false); }).join('') + '</ul>' : '<p class="muted">none</p>') + '</div>';
    if (f.kernels.length) {
      h += '<table class="grid"><thead><tr><th>kernel</th><th>line</th><th>form</th><th>check</th><th>diagnostics</th></tr></thead><tbody>';
      f.kernels.forEach(function (i) {
        var k = K[i];
        h += '<tr><td><a href="#k/' + i + '">' + esc(k.kernel) + '</a></td><td>' + esc(k.line) + '</td><td><span class="form form-' + cls(k.form) + '">' +
          esc(k.form) + '</span></td><td>' + esc(k.status) + '</td><td>' + k.diags.length + '</td></tr>';
      });
      h += '</tbody></table>';
    }
    $('file-view').innerHTML = h;
    show('file-view');
    document.title = f.file + ' \u2014 cuda2tile report';
    window.scrollTo(0, 0);
  }
  var current = 'index-view';
  function show(id) {
    if (current === 'index-view' && id !== 'index-view') indexScroll = window.scrollY;
    ['index-view', 'kernel-view', 'file-view'].forEach(function (v) { $(v).classList.toggle('hidden', v !== id); });
    current = id;
  }
  function showIndex() {
    show('index-view');
    document.title = 'cuda2tile report';
    window.scrollTo(0, indexScroll);
  }
  function route() {
    var m, h = location.hash;
    if ((m = /^#k\/(\d+)$/.exec(h)) && K[+m[1]]) showKernel(+m[1]);
    else if ((m = /^#f\/(\d+)$/.exec(h)) && F[+m[1]]) showFile(+m[1]);
    else showIndex();
  }
  function goIndex() { if (location.hash && location.hash !== '#') location.hash = ''; else showIndex(); }

  // ---- events (delegated) ---------------------------------------------------------------------
  $('f-text').addEventListener('input', function (e) { state.text = e.target.value.trim(); renderKernels(); renderFiles(); });
  $('f-form').addEventListener('change', function (e) { state.form = e.target.value; renderKernels(); renderFiles(); });
  $('f-check').addEventListener('change', function (e) { state.check = e.target.value; renderKernels(); renderFiles(); });
  $('f-diag').addEventListener('change', function (e) { state.diag = e.target.value; renderKernels(); renderFiles(); });
  $('f-reset').addEventListener('click', function () { state.text = state.form = state.check = state.diag = ''; state.file = -1; refresh(); });
  document.querySelector('#kernels thead').addEventListener('click', function (e) {
    var th = e.target.closest('th[data-sort]');
    if (!th) return;
    var key = th.getAttribute('data-sort');
    if (state.sort === key) state.rev = !state.rev; else { state.sort = key; state.rev = false; }
    renderKernels();
  });
  document.addEventListener('click', function (e) {
    var t = e.target.closest('[data-set],[data-goto],[data-mode],[data-filter-file],#back,#show-all,#f-file-clear');
    if (!t) return;
    if (t.hasAttribute('data-set')) {
      e.preventDefault();
      state[t.getAttribute('data-set')] = t.getAttribute('data-value');
      refresh();
      $('filters').scrollIntoView();
    } else if (t.hasAttribute('data-goto')) {
      e.preventDefault();
      var row = $('L' + t.getAttribute('data-goto'));
      if (row) { row.scrollIntoView({ block: 'center' }); row.classList.add('flash'); setTimeout(function () { row.classList.remove('flash'); }, 1500); }
    } else if (t.hasAttribute('data-mode')) {
      mode = t.getAttribute('data-mode');
      var i = +$('kernel-view').getAttribute('data-kernel');
      document.querySelectorAll('.toolbar button').forEach(function (b) { b.classList.toggle('on', b.getAttribute('data-mode') === mode); });
      $('sbs-wrap').innerHTML = sideBySide(K[i]);
    } else if (t.hasAttribute('data-filter-file')) {
      e.preventDefault();
      state.file = +t.getAttribute('data-filter-file');
      refresh();
      goIndex();
    } else if (t.id === 'back') {
      e.preventDefault(); goIndex();
    } else if (t.id === 'show-all') {
      state.limit = Infinity; renderKernels();
    } else if (t.id === 'f-file-clear') {
      state.file = -1; refresh();
    }
  });
  document.addEventListener('keydown', function (e) {
    if (current !== 'kernel-view' || e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
    var id = e.key === 'j' ? 'next' : e.key === 'k' ? 'prev' : null;
    if (id && $(id)) location.hash = $(id).getAttribute('href');
    else if (e.key === 'Escape') goIndex();
  });
  window.addEventListener('hashchange', route);

  renderSummary();
  refresh();
  route();
  document.body.setAttribute('data-ready', '1');
  if (window.performance && performance.mark) performance.mark('c2t-ready');
})();
