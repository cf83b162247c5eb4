// The scorer prelude: evaluated once per isolate, by app/sandbox/isolate.py, as
// (this function)(globalThis, token, sliceMs, constants); app/sandbox/prelude.py describes it.
(function (G, TOKEN, SLICE_MS, CONSTANTS) {
  'use strict';
  // Timers would run scorer code outside a query's time limit: there are none.
  const noTimers = () => { throw new Error('timers are not available to scorers'); };
  for (const name of ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']) {
    if (Object.prototype.hasOwnProperty.call(G, name) && !Reflect.deleteProperty(G, name)) {
      G[name] = noTimers;
    }
  }
  if (Object.prototype.hasOwnProperty.call(G, '__timer_manager')) G.__timer_manager = undefined;
  if (typeof Atomics === 'object') { delete Atomics.wait; delete Atomics.waitAsync; }
  const seen = new Set();
  const freeze = (value) => {
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
    if (seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    freeze(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const d = Object.getOwnPropertyDescriptor(value, key);
      if ('value' in d) freeze(d.value); else { freeze(d.get); freeze(d.set); }
    }
  };
  for (const key of Reflect.ownKeys(G)) {
    if (G[key] !== G) freeze(G[key]);
  }
  freeze(function* () {}); freeze(async function () {}); freeze(async function* () {});
  freeze([].values()); freeze(new Map().entries()); freeze(new Set().values());
  freeze(''[Symbol.iterator]()); freeze('a'.matchAll(/a/g));

  const DEFAULT_COUNT = 10;
  const {
    PARAMS, LINE_OFFSET, SOURCE_URL, MAX_LOG_LINES, MAX_LOG_CHARS, MAX_QUERY_LOG_CHARS,
  } = CONSTANTS;
  const MAX_RUN_LOG_CHARS = 1000000;
  let Q = null;
  let userFn = null;
  let compileError = null;
  let queue = [];
  let cursor = 0;
  let runResults = [];
  let runLogChars = 0;
  let tainted = false;
  let SCALE = [];
  let MAX = null;
  // The Quepid environment (SCORING.md): ratings read through parseInt where Quepid does,
  // its edit-distance table, its avgRating100 and its clean-up of the value set.
  let QUEPID = false;
  const UNSCORED_NO_RESULTS = 'no results (Quepid shows "zsr")';
  const UNSCORED_NO_RATINGS = 'no ratings (Quepid shows "--")';

  const DOC_PROTO = Object.freeze({
    hasRating() { return this.rating !== null && this.rating !== undefined; },
    getRating() { return this.rating; },
  });
  const BEST_PROTO = Object.freeze({ getRating() { return this.rating; } });

  const count = (c, n) => Math.min(c === undefined ? DEFAULT_COUNT : c, n);
  // parseInt, as Quepid reads a rating: truncation toward zero; unrated stays null.
  const asQuepid = (r) => (r === null || r === undefined ? r : Math.trunc(r));
  const topRatingsOf = (c) => {
    const out = [];
    for (let i = 0; i < count(c, Q.docs.length); i++) {
      out.push(QUEPID ? asQuepid(Q.docs[i].rating) : Q.docs[i].rating);
    }
    return out;
  };
  const meanOf = (c) => {
    let total = 0, rated = 0;
    for (const r of topRatingsOf(c)) if (r !== null) { total += r; rated++; }
    return rated === 0 ? null : total / rated;
  };
  const levenshtein = (a, b) => {
    let prev = [];
    for (let j = 0; j <= b.length; j++) prev.push(j);
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) {
        const swap = prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
        cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, swap));
      }
      prev = cur;
    }
    return prev[b.length];
  };
  // Quepid's table: the same recurrence, but every cell outside the table reads 0 and the
  // result is the last cell, so leading insertions and deletions are under-counted.
  const quepidDistance = (a, b) => {
    if (a.length === 0 || b.length === 0) return 0;
    const d = [];
    const at = (i, j) => (i < 0 || j < 0 ? 0 : d[i][j]);
    for (let i = 0; i < a.length; i++) {
      d.push([]);
      for (let j = 0; j < b.length; j++) {
        const cost = a[i] === b[j] ? 0 : 1;
        d[i].push(Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost));
      }
    }
    return d[a.length - 1][b.length - 1];
  };
  const text = (v) => {
    try {
      if (typeof v === 'string') return v;
      if (v instanceof Error) return String(v);
      if (typeof v === 'object' && v !== null) {
        const s = JSON.stringify(v);
        if (s !== undefined) return s;
      }
      return String(v);
    } catch (e) { return '[unprintable ' + typeof v + ']'; }
  };
  const log = (...args) => {
    if (Q === null || Q.logs.length >= MAX_LOG_LINES || Q.logChars >= MAX_QUERY_LOG_CHARS) return;
    let line = args.map(text).join(' ');
    if (line.length > MAX_LOG_CHARS) line = line.slice(0, MAX_LOG_CHARS) + '…';
    const room = MAX_QUERY_LOG_CHARS - Q.logChars;
    if (line.length > room) line = line.slice(0, room) + ' … (console output truncated)';
    Q.logs.push(line);
    Q.logChars += line.length;
    runLogChars += line.length;
  };
  const record = (value) => { if (Q !== null && !Q.set) { Q.set = true; Q.value = value; } };
  const setScore = (x) => record(x);
  const pass = () => record(100);
  const fail = () => record(0);

  const HELPERS = [
    Object.freeze({ log, info: log, warn: log, error: log, debug: log }),
    () => Q.total,
    () => Q.docs.length,
    (i) => (Q.docs[i] === undefined ? {} : Q.docs[i]),
    (i) => Q.docs[i] !== undefined,
    (i) => Q.docs[i] !== undefined && Q.docs[i].rating !== null,
    (i) => (Q.docs[i] === undefined ? undefined : Q.docs[i].rating),
    (c) => meanOf(c),
    (c) => {
      const m = meanOf(c);
      if (QUEPID && !m) return null;  // Quepid: a mean of 0 is no score
      return m === null ? null : Math.floor(m * 100 / MAX);
    },
    (c) => {
      const top = topRatingsOf(c);
      const best = Q.best.slice(0, c === undefined ? DEFAULT_COUNT : c).map((b) => b.rating);
      while (best.length < top.length) best.push(null);
      return QUEPID ? quepidDistance(top, best) : levenshtein(top, best);
    },
    (f, c) => { for (let i = 0; i < count(c, Q.docs.length); i++) f(Q.docs[i], i); },
    (f) => { const best = Q.best; for (let i = 0; i < best.length; i++) f(best[i], i); },
    (r, f) => { for (const b of Q.best) if (b.rating === r) f(b); },
    (c) => Q.best.slice(0, c).map((b) => b.rating),
    (key) => (Object.prototype.hasOwnProperty.call(Q.options, key) ? Q.options[key] : null),
    (i) => (Q.best[i] === undefined ? {} : Q.best[i]),
    (i) => Q.best[i] !== undefined,
    (f, c) => { for (let i = 0; i < count(c, Q.best.length); i++) f(Q.best[i], i); },
    setScore, pass, fail,
    (c) => { if (!c) fail(); },
    (c, s) => { if (!c) setScore(s); },
  ].map(Object.freeze);
  // Accepted for Quepid's scorers: the depth for the unrated count, and a refresh that
  // Relevo does not need (ratings are always current).
  const recordDepthOfRanking = Object.freeze((k) => { if (Q !== null) Q.depth = k; });
  const refreshRatedDocs = Object.freeze(() => undefined);
  // Quepid's clean-up of the value a scorer set: NaN, negatives and non-numbers are 0;
  // nothing set (or null) is no score only with no results or no ratings, else 0.
  const quepidResult = (done) => {
    const v = done.set ? done.value : null;
    if (v === null || v === undefined) {
      if (done.docs.length === 0) return ['u', UNSCORED_NO_RESULTS, done.logs];
      if (done.best.length === 0) return ['u', UNSCORED_NO_RATINGS, done.logs];
      return ['s', 0, done.logs];
    }
    if (typeof v !== 'number' || Number.isNaN(v) || v < 0) return ['s', 0, done.logs];
    return ['s', v, done.logs];
  };

  // Before each query: delete the globals the previous one made. One that cannot be deleted
  // marks the isolate tainted (the batch drops it after this slice), and the runner refuses
  // the next query (its global count is off), which then runs in a new isolate.
  const BASE = new Set(Reflect.ownKeys(G));
  const cleanGlobals = () => {
    const keys = Reflect.ownKeys(G);
    if (keys.length === BASE.size) return;
    for (const key of keys) {
      if (!BASE.has(key) && !Reflect.deleteProperty(G, key)) tainted = true;
    }
  };

  const describeValue = (v) => {
    if (typeof v === 'string') {
      return 'the string ' + JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
    }
    if (typeof v === 'number' || typeof v === 'boolean' || v === undefined) return String(v);
    return 'a value of type ' + typeof v;
  };
  const describeError = (e) => {
    try {
      if (!(e instanceof Error)) return 'scorer threw ' + text(e);
      let message = String(e);
      const stack = typeof e.stack === 'string' ? e.stack : '';
      const match = new RegExp(SOURCE_URL.replace(/[.]/g, '\\.') + ':(\\d+):\\d+').exec(stack);
      if (match) message += ' (line ' + (Number(match[1]) - LINE_OFFSET) + ')';
      return message;
    } catch (err) { return 'scorer threw an exception'; }
  };

  const runOne = (q) => {
    cleanGlobals();
    const docs = q[0].map((d, i) => ({
      __proto__: DOC_PROTO, ...d[2], id: d[0], rating: d[1], rank: i + 1,
      fields: d[2] || {}, doc: d[2] || {},
    }));
    const best = q[1].map((b) => ({
      __proto__: BEST_PROTO, id: b[0], rating: QUEPID ? asQuepid(b[1]) : b[1],
    }));
    const own = q[5] || {};
    const query = Object.freeze({ query_text: q[4] === undefined ? '' : q[4], options: own });
    Q = {
      docs, best, total: q[2], options: q[3] || {},
      logs: [], logChars: 0, set: false, value: undefined, depth: null,
    };
    let error = null;
    try {
      userFn(docs, best, q[2], MAX, SCALE.slice(), ...HELPERS,
        query, own, recordDepthOfRanking, refreshRatedDocs);
    } catch (e) {
      error = describeError(e);
    }
    const done = Q;
    Q = null;
    if (QUEPID && error === null) return quepidResult(done);
    if (done.set) {
      const v = done.value;
      if (v === null) return ['u', null, done.logs];
      if (typeof v === 'number' && Number.isFinite(v)) return ['s', v, done.logs];
      return ['e', 'setScore needs a finite number or null, got ' + describeValue(v), done.logs];
    }
    if (error !== null) return ['e', error, done.logs];
    return ['e', 'scorer did not call setScore', done.logs];
  };

  const check = (token) => { if (token !== TOKEN) throw new Error('not allowed'); };
  const api = {
    // Called twice: with the user's body, to see it compile, then with the runner's
    // (isolate.py), which builds the user's function anew for every query.
    setup(token, code, scale, environment) {
      check(token);
      QUEPID = environment === 'quepid';
      SCALE = JSON.parse(scale);
      MAX = SCALE[SCALE.length - 1];
      try {
        userFn = new Function(...PARAMS, code);
      } catch (e) {
        compileError = String(e);
      }
      return compileError;
    },
    load(token, data) {
      check(token);
      queue = JSON.parse(data);
      cursor = 0;
    },
    run(token, maxCount) {
      check(token);
      runResults = [];
      runLogChars = 0;
      const start = Date.now();
      while (cursor < queue.length && runResults.length < maxCount) {
        const full = Date.now() - start >= SLICE_MS || runLogChars > MAX_RUN_LOG_CHARS;
        if (runResults.length > 0 && full) break;
        const q = queue[cursor];
        queue[cursor] = null;
        cursor++;
        runResults.push(runOne(q));
      }
      const out = JSON.stringify({ r: runResults, t: tainted });
      runResults = [];
      return out;
    },
    interrupted(token) {
      check(token);
      const logs = Q === null ? [] : Q.logs;
      const out = JSON.stringify({ r: runResults, running: Q !== null, logs });
      Q = null;
      runResults = [];
      return out;
    },
  };
  Object.freeze(api);
  for (const key of Reflect.ownKeys(G)) {
    const d = Object.getOwnPropertyDescriptor(G, key);
    if (d.configurable) {
      const locked = { configurable: false };
      if ('value' in d) locked.writable = false;
      Object.defineProperty(G, key, locked);
    }
  }
  Object.defineProperty(G, '__relevo', { value: api, writable: false, configurable: false });
  BASE.add('__relevo');
})
