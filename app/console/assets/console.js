// The crawl console: one page, four screens chosen by the URL's fragment (#/jobs,
// #/jobs/<id>, #/query, #/record?url=...). It reads the service's JSON API on the same
// origin; with a token set, the session cookie the sign-in form set goes with every request.
// Every value from the crawl is put in the page as text (textContent), never as markup.

const main = document.getElementById('main');
const announcer = document.getElementById('announce');

/** How often a job's page asks again; the jobs list (one status call per job) asks less often. */
const POLL_MS = 2000;
const LIST_POLL_MS = 5000;
let poll = null;
let screenToken = 0;

// ---- small helpers ---------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

function announce(text) {
  announcer.textContent = '';
  setTimeout(() => (announcer.textContent = text), 50);
}

/** A call of the API: {status, body}. A 401 means the session ended: reloading shows the sign-in form. */
/** a read the service has not answered by then fails (and the screen's next refresh asks again) rather than freezing the screen */
const READ_TIMEOUT_MS = 20_000;

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal: method === 'GET' ? AbortSignal.timeout(READ_TIMEOUT_MS) : undefined,
  }).catch((err) => {
    throw err.name === 'TimeoutError' ? new Error(`the service did not answer ${path} within ${READ_TIMEOUT_MS / 1000} s`) : err;
  });
  if (res.status === 401) {
    location.reload();
    return new Promise(() => undefined);
  }
  const type = res.headers.get('content-type') || '';
  return { status: res.status, body: type.startsWith('application/json') ? await res.json() : await res.blob() };
}

const errorText = (body) => (body && body.error ? `${body.error.field}: ${body.error.reason}` : 'the service gave no reason');
const num = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString('en'));
const when = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC');
/** An instant ahead, as the clock reads it and how far off it is: `10:07:41 UTC (in 1.2 s)`. */
function inTime(ms, now) {
  const s = Math.max(0, (ms - now) / 1000);
  const left = s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
  return `${when(ms).slice(11)} (in ${left})`;
}
const bytes = (n) => (n === null || n === undefined ? '—' : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);
const FAILURES = ['http_error', 'network_error', 'robots_disallowed', 'unsupported_content', 'refused'];
const errorsOf = (outcomes) => FAILURES.reduce((n, k) => n + (outcomes?.[k] ?? 0), 0);

function schedule(spec) {
  const s = spec.schedule || { kind: 'once' };
  if (s.kind === 'interval') return `every ${typeof s.every === 'number' ? `${s.every} ms` : s.every}`;
  if (s.kind === 'cron') return `cron ${s.cron}`;
  return 'once';
}

const stateBadge = (state) => el('span', { class: `state state-${state}`, text: state });
const recordLink = (url) => el('a', { href: `#/record?url=${encodeURIComponent(url)}`, text: url });

function table(caption, columns, rows, opts = {}) {
  const numeric = new Set(opts.numeric || []);
  return el(
    'table',
    {},
    el('caption', { class: 'visually-hidden', text: caption }),
    el('thead', {}, el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: numeric.has(c) ? 'num' : null, text: c })))),
    el(
      'tbody',
      {},
      rows.map((r) =>
        el(
          'tr',
          {},
          r.map((cell, i) => el('td', { class: numeric.has(columns[i]) ? 'num' : cell instanceof Node && cell.tagName === 'A' ? 'url' : null }, cell ?? '')),
        ),
      ),
    ),
  );
}

function panel(title, id, ...content) {
  const hid = `${id}-title`;
  return el('section', { class: 'panel', id, 'aria-labelledby': hid }, el('h2', { id: hid, text: title }), ...content);
}

function setScreen(title, navKey, ...content) {
  document.title = `${title} · crawl console`;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === navKey) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  main.replaceChildren(...content.filter(Boolean));
}

function stopPolling() {
  if (poll) clearTimeout(poll);
  poll = null;
}

/** Calls `tick` now and `every` ms after each call ends, while this screen is shown. */
function startPolling(tick, every = POLL_MS) {
  const mine = screenToken;
  const run = async () => {
    if (mine !== screenToken) return;
    try {
      await tick();
    } catch (err) {
      const status = document.getElementById('poll-status');
      if (status) status.textContent = `Could not refresh: ${err.message}`;
    }
    if (mine === screenToken) poll = setTimeout(run, every);
  };
  run();
}

// ---- jobs ------------------------------------------------------------------

const FORM_FIELDS = ['name', 'seeds', 'scope', 'max_depth', 'max_pages', 'schedule', 'priority'];

function field(name, label, control, hint) {
  control.id = `f-${name}`;
  control.name = name;
  const hintId = hint ? `f-${name}-hint` : null;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return el(
    'div',
    { class: `field${name === 'seeds' || name === 'name' ? ' wide' : ''}`, 'data-field': name },
    el('label', { for: control.id, text: label }),
    control,
    hint ? el('span', { class: 'hint', id: hintId, text: hint }) : null,
  );
}

const select = (options, value) => el('select', {}, options.map((o) => el('option', { value: o, selected: o === value ? true : null, text: o })));

function jobForm() {
  const form = el(
    'form',
    { class: 'job-form', novalidate: true },
    field('name', 'Name', el('input', { type: 'text', autocomplete: 'off' }), 'free text, to tell jobs apart'),
    field('seeds', 'Seeds', el('textarea', { required: true, rows: 4 }), 'one URL per line; the crawl starts from these'),
    field('scope', 'Scope', select(['domain', 'host', 'prefix', 'open'], 'domain'), "domain: the seeds' registrable domains; host: their hosts; prefix: their paths; open: any public host"),
    field('max_depth', 'Maximum depth', el('input', { type: 'number', min: 0, value: 5, inputmode: 'numeric' }), 'links from a seed'),
    field('max_pages', 'Page budget', el('input', { type: 'number', min: 0, value: 0, inputmode: 'numeric' }), 'pages fetched per run; 0: no limit'),
    field('schedule', 'Schedule', el('input', { type: 'text', placeholder: 'once', autocomplete: 'off' }), 'empty: once; "every 6h"; or a cron expression such as "0 0 3 * * *"'),
    field('priority', 'Priority', select(['high', 'normal', 'low'], 'normal')),
    el('div', { class: 'field wide' }, el('div', { id: 'form-error', role: 'alert' }), el('div', { class: 'actions' }, el('button', { type: 'submit', text: 'Create job' }))),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearFieldErrors(form);
    const body = jobBody(form);
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const res = await api('POST', '/api/v1/jobs', body);
      if (res.status === 201) {
        announce(`Created job ${res.body.id}`);
        location.hash = `#/jobs/${res.body.id}`;
        return;
      }
      showFieldError(form, res.body?.error?.field ?? '(body)', errorText(res.body), body);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function jobBody(form) {
  const v = (name) => form.elements[name].value.trim();
  const body = { seeds: v('seeds').split(/\s*\n\s*/).filter((s) => s !== '') };
  if (v('name')) body.name = v('name');
  body.scope = { mode: v('scope') };
  for (const k of ['max_depth', 'max_pages']) if (v(k) !== '') body[k] = Number(v(k));
  const s = v('schedule');
  if (s === '' || s === 'once') body.schedule = { kind: 'once' };
  else if (/^every\s+/i.test(s)) body.schedule = { kind: 'interval', every: s.replace(/^every\s+/i, '') };
  else body.schedule = { kind: 'cron', cron: s };
  body.priority = v('priority');
  return body;
}

function clearFieldErrors(form) {
  for (const e of form.querySelectorAll('.field-error')) e.remove();
  for (const c of form.querySelectorAll('[aria-invalid]')) {
    c.removeAttribute('aria-invalid');
    const hint = document.getElementById(`${c.id}-hint`);
    if (hint) c.setAttribute('aria-describedby', hint.id);
    else c.removeAttribute('aria-describedby');
  }
  form.querySelector('#form-error').replaceChildren();
}

/** The API names the field (`seeds[1]`, `schedule.cron`, `scope.include[0]`): its error goes beside the control that sets it. */
function showFieldError(form, apiField, text, body) {
  const top = apiField.split(/[.[]/)[0];
  const name = FORM_FIELDS.includes(top) ? top : null;
  let message = text;
  const seed = /^seeds\[(\d+)\]/.exec(apiField);
  if (seed) message = `seed ${Number(seed[1]) + 1} (${body.seeds[Number(seed[1])]}): ${text.slice(text.indexOf(':') + 2)}`;
  if (!name) {
    form.querySelector('#form-error').replaceChildren(el('p', { class: 'alert', text: `The job was not created: ${message}` }));
    return;
  }
  const control = form.elements[name];
  const id = `f-${name}-error`;
  control.closest('.field').append(el('p', { class: 'field-error', id, text: message }));
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-describedby', [id, control.getAttribute('aria-describedby')].filter(Boolean).join(' '));
  control.focus();
  announce(`The job was not created: ${message}`);
}

function actionButtons(job, after) {
  const label = job.spec?.name || job.id;
  const act = async (verb) => {
    const res = await api('POST', `/api/v1/jobs/${encodeURIComponent(job.id)}/${verb}`);
    announce(res.status === 200 ? `Job ${label}: ${res.body.state}` : `Could not ${verb} ${label}: ${errorText(res.body)}`);
    await after();
  };
  const b = (verb, text, enabled) =>
    el('button', { type: 'button', class: 'secondary', 'aria-label': `${text} ${label}`, disabled: enabled ? null : true, onclick: () => act(verb), 'data-action': verb, text });
  return el(
    'div',
    { class: 'actions' },
    b('pause', 'Pause', job.state === 'active'),
    b('resume', 'Resume', job.state === 'paused'),
    b('cancel', 'Cancel', job.state !== 'cancelled'),
  );
}

async function jobsScreen() {
  const list = el('div', {}, el('p', { class: 'note', text: 'Loading jobs…' }));
  setScreen(
    'Jobs',
    'jobs',
    el('h1', { text: 'Jobs' }),
    panel('Jobs', 'jobs-list', el('p', { id: 'poll-status', class: 'note', role: 'status' }), list),
    panel('New job', 'new-job', jobForm()),
  );
  let shown = '';
  const refresh = async () => {
    const res = await api('GET', '/api/v1/jobs');
    if (res.status !== 200) throw new Error(errorText(res.body));
    const jobs = await Promise.all(res.body.jobs.slice(-50).reverse().map(async (j) => (await api('GET', `/api/v1/jobs/${encodeURIComponent(j.id)}`)).body));
    const key = JSON.stringify(jobs.map((j) => [j.id, j.state, j.pages, j.outcomes, j.queued, j.runs]));
    if (key === shown) return;
    shown = key;
    // the table is rebuilt only when it changed, so a keyboard user's focus stays where it is
    const focused = document.activeElement?.dataset?.action ? [document.activeElement.closest('tr')?.dataset.job, document.activeElement.dataset.action] : null;
    list.replaceChildren(
      jobs.length === 0
        ? el('p', { class: 'note', text: 'No jobs yet: create one below.' })
        : table(
            'Jobs',
            ['Job', 'State', 'Pages', 'Errors', 'Queued', 'Schedule', 'Priority', 'Created', 'Actions'],
            jobs.map((j) => [
              el('a', { href: `#/jobs/${encodeURIComponent(j.id)}`, text: j.spec.name ? `${j.spec.name} (${j.id})` : j.id }),
              stateBadge(j.state),
              num(j.pages),
              num(errorsOf(j.outcomes)),
              num(j.queued),
              schedule(j.spec),
              j.spec.priority || 'normal',
              when(j.created_at),
              actionButtons(j, refresh),
            ]),
            { numeric: ['Pages', 'Errors', 'Queued'] },
          ),
    );
    list.querySelectorAll('tbody tr').forEach((tr, i) => (tr.dataset.job = jobs[i].id));
    if (focused) list.querySelector(`tr[data-job="${focused[0]}"] [data-action="${focused[1]}"]`)?.focus();
  };
  startPolling(refresh, LIST_POLL_MS);
}

// ---- a job, live -------------------------------------------------------------

/** Lines of the chart: each outcome with its own dash pattern and label, so colour is never the only cue. */
const SERIES = [
  { key: 'fetched', label: 'fetched', dash: '', color: '#0b4f8a' },
  { key: 'failed', label: 'failed (errors)', dash: '6 4', color: '#a4161a' },
  { key: 'other', label: 'filtered, redirects, not modified', dash: '2 3', color: '#4a525e' },
];

function seriesOf(outcomes) {
  const fetched = outcomes.fetched ?? 0;
  const failed = errorsOf(outcomes);
  const total = Object.entries(outcomes).reduce((n, [k, v]) => (k === 'retry' ? n : n + v), 0);
  return { fetched, failed, other: total - fetched - failed };
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children) node.append(c);
  return node;
}

/** Pages per second of each series over the job's timeline, drawn as an inline SVG line chart. */
function chart(activity) {
  const W = 800;
  const H = 260;
  const pad = { l: 48, r: 12, t: 10, b: 28 };
  const secs = activity.bucket_ms / 1000;
  const points = activity.timeline.map((p) => ({ t: p.t, ...seriesOf(p.outcomes) }));
  const peak = Math.max(1, ...points.flatMap((p) => SERIES.map((s) => p[s.key] / secs)));
  const t0 = points[0]?.t ?? 0;
  const t1 = points.at(-1)?.t ?? t0 + 1;
  const x = (t) => pad.l + ((t - t0) / Math.max(1, t1 - t0)) * (W - pad.l - pad.r);
  const y = (v) => H - pad.b - (v / peak) * (H - pad.t - pad.b);
  const now = points.at(-1);
  const summary = now
    ? `Pages per second over ${points.length} points of ${secs} s; latest: ${(now.fetched / secs).toFixed(2)} fetched, ${(now.failed / secs).toFixed(2)} failed per second; peak ${peak.toFixed(2)}.`
    : 'Nothing persisted yet.';
  const chartSvg = svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': summary },
    svg('line', { x1: pad.l, y1: H - pad.b, x2: W - pad.r, y2: H - pad.b, stroke: '#6b7380' }),
    svg('line', { x1: pad.l, y1: pad.t, x2: pad.l, y2: H - pad.b, stroke: '#6b7380' }),
    svg('text', { x: pad.l - 6, y: pad.t + 10, 'text-anchor': 'end' }, `${peak.toFixed(1)}/s`),
    svg('text', { x: pad.l - 6, y: H - pad.b, 'text-anchor': 'end' }, '0'),
    svg('text', { x: pad.l, y: H - 8 }, points.length ? when(t0).slice(11) : ''),
    svg('text', { x: W - pad.r, y: H - 8, 'text-anchor': 'end' }, points.length ? when(t1).slice(11) : ''),
    ...SERIES.map((s) =>
      svg('polyline', {
        fill: 'none',
        stroke: s.color,
        'stroke-width': 2,
        'stroke-dasharray': s.dash || null,
        points: points.map((p) => `${x(p.t).toFixed(1)},${y(p[s.key] / secs).toFixed(1)}`).join(' '),
      }),
    ),
  );
  const legend = el(
    'ul',
    { class: 'legend' },
    SERIES.map((s) =>
      el('li', {}, svg('svg', { width: 28, height: 10, 'aria-hidden': 'true' }, svg('line', { x1: 0, y1: 5, x2: 28, y2: 5, stroke: s.color, 'stroke-width': 2, 'stroke-dasharray': s.dash || null })), ` ${s.label}`),
    ),
  );
  return el('div', {}, chartSvg, legend);
}

async function jobScreen(id) {
  const head = el('div', {});
  const stats = el('div', { class: 'stats' });
  const chartBox = el('div', {});
  const outcomes = el('div', {});
  const lag = el('div', {});
  const hosts = el('div', {});
  const pages = el('div', {});
  const failures = el('div', {});
  setScreen(
    `Job ${id}`,
    'jobs',
    el('p', {}, el('a', { href: '#/jobs', text: '← All jobs' })),
    head,
    el('p', { id: 'poll-status', class: 'note', role: 'status' }),
    stats,
    el('div', { class: 'grid wide-first' }, panel('Pages per second and outcomes', 'job-chart', chartBox), panel('Outcomes', 'job-outcomes', outcomes)),
    el('div', { class: 'grid wide-first' }, panel('Hosts waiting', 'job-hosts', hosts), panel('Queue depth per stage', 'job-lag', lag)),
    panel('Newest pages', 'job-pages', pages),
    panel('Newest failures', 'job-failures', failures),
  );
  let headKey = '';
  const refresh = async () => {
    const [job, status, activity] = await Promise.all([
      api('GET', `/api/v1/jobs/${encodeURIComponent(id)}`),
      api('GET', `/api/v1/crawl/status?job=${encodeURIComponent(id)}`),
      api('GET', `/api/v1/jobs/${encodeURIComponent(id)}/activity`),
    ]);
    if (job.status !== 200) {
      head.replaceChildren(el('h1', { text: `Job ${id}` }), el('p', { class: 'alert', role: 'alert', text: errorText(job.body) }));
      return;
    }
    const j = job.body;
    document.getElementById('poll-status').textContent = `Updated ${when(Date.now()).slice(11)}; refreshes every ${POLL_MS / 1000} s.`;
    if (headKey !== j.state) {
      if (headKey !== '') announce(`Job ${j.spec.name || j.id} is ${j.state}`);
      headKey = j.state;
      head.replaceChildren(
        el('h1', {}, `Job ${j.spec.name ? `${j.spec.name} ` : ''}`, el('span', { class: 'note', text: `(${j.id})` }), ' ', stateBadge(j.state)),
        actionButtons(j, refresh),
      );
    }
    const stat = (label, value) => el('div', { class: 'stat' }, el('span', { class: 'v', text: value }), label);
    stats.replaceChildren(
      stat('state', j.state),
      stat('activity', j.activity),
      stat('pages stored', num(j.pages)),
      stat('errors', num(errorsOf(j.outcomes))),
      stat('queued URLs', num(j.queued)),
      stat('runs', num(j.runs)),
      stat('schedule', schedule(j.spec)),
    );
    if (activity.status === 200) {
      const a = activity.body;
      chartBox.replaceChildren(chart(a));
      pages.replaceChildren(
        a.newest_pages.length === 0
          ? el('p', { class: 'note', text: 'No page stored yet.' })
          : table(
              'Newest pages',
              ['Title', 'URL', 'Status', 'Size', 'Near-duplicate of'],
              a.newest_pages.map((p) => [p.title || '(no title)', recordLink(p.url), p.fetch_status, bytes(p.content_length), p.near_duplicate_of ? recordLink(p.near_duplicate_of) : '—']),
              { numeric: ['Status', 'Size'] },
            ),
      );
      failures.replaceChildren(
        a.newest_failures.length === 0
          ? el('p', { class: 'note', text: 'No failure so far.' })
          : table(
              'Newest failures',
              ['URL', 'Outcome', 'Status', 'Reason', 'When'],
              a.newest_failures.map((f) => [recordLink(f.url), f.outcome, f.fetch_status ?? '—', f.reason, String(f.fetch_time ?? '').replace('T', ' ').slice(0, 19)]),
            ),
      );
    }
    const counts = Object.entries(j.outcomes || {});
    outcomes.replaceChildren(
      counts.length === 0 ? el('p', { class: 'note', text: 'Nothing persisted yet.' }) : table('Outcomes', ['Outcome', 'URLs'], counts.map(([k, n]) => [k, num(n)]), { numeric: ['URLs'] }),
    );
    if (status.status === 200) {
      const s = status.body;
      lag.replaceChildren(
        table('Messages waiting per stage (the stage consumer\'s lag)', ['Stage', 'Waiting'], Object.entries(s.pipeline).map(([k, n]) => [k, num(n)]), { numeric: ['Waiting'] }),
        el('p', { class: 'note', text: 'Messages the stage has not handled yet, crawl-wide (every job).' }),
      );
      hosts.replaceChildren(
        ...[
        s.hosts.length === 0
          ? el('p', { class: 'note', text: 'No host of this job is waiting.' })
          : table(
              'Hosts waiting',
              ['Host', 'Queued', 'Waits for', 'Until', 'Gives up', 'Detail'],
              s.hosts.map((h) => [h.host, num(h.queued), h.reason, h.until === null ? 'now' : inTime(h.until, s.at), h.givesUpAt === null ? '—' : inTime(h.givesUpAt, s.at), h.detail]),
              { numeric: ['Queued'] },
            ),
        s.hosts_total > s.hosts.length ? el('p', { class: 'note', text: `The ${s.hosts.length} hosts tried soonest of ${s.hosts_total}.` }) : null,
        ].filter(Boolean),
      );
    }
  };
  startPolling(refresh);
}

// ---- query -------------------------------------------------------------------

const query = { sql: 'SELECT url, title, fetch_status, content_length\nFROM pages\nORDER BY fetch_time DESC', offset: 0, limit: 25 };

function queryScreen() {
  const results = el('div', { id: 'query-results' });
  const error = el('div', { id: 'query-error', role: 'alert' });
  const form = el(
    'form',
    { class: 'query-box' },
    el('div', { class: 'field' }, el('label', { for: 'sql', text: 'SQL' }), el('textarea', { id: 'sql', name: 'sql', spellcheck: 'false', 'aria-describedby': 'sql-hint' }, query.sql)),
    el('p', { class: 'hint note', id: 'sql-hint', text: 'Views: pages, links, fetch_log, captures, hosts (and each table with _all for every version). Reads only; Ctrl+Enter runs.' }),
    el(
      'div',
      { class: 'pager' },
      el('button', { type: 'submit', text: 'Run' }),
      el('label', { for: 'limit', text: 'Rows per page' }),
      select(['25', '100', '500'], String(query.limit)),
      el('button', { type: 'button', class: 'secondary', id: 'csv', text: 'Download CSV', onclick: () => downloadCsv(form, error) }),
    ),
  );
  const limit = form.querySelector('select');
  limit.id = 'limit';
  const sql = form.querySelector('textarea');
  sql.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  const run = async (offset) => {
    query.sql = sql.value;
    query.limit = Number(limit.value);
    query.offset = offset;
    error.replaceChildren();
    results.replaceChildren(el('p', { class: 'note', text: 'Running…' }));
    const res = await api('POST', '/api/v1/query', { sql: query.sql, offset, limit: query.limit });
    if (res.status !== 200) {
      results.replaceChildren();
      error.replaceChildren(el('p', { class: 'alert', text: `DuckDB: ${res.body?.error?.reason ?? errorText(res.body)}` }));
      return;
    }
    const r = res.body;
    const urlColumns = new Set(r.columns.filter((c) => /(^|_)url$/.test(c)));
    const pager = el(
      'div',
      { class: 'pager' },
      el('span', { role: 'status', text: r.rows.length === 0 ? 'No rows.' : `Rows ${offset + 1}–${offset + r.rows.length}${r.has_more ? ' (more follow)' : ''}` }),
      el('button', { type: 'button', class: 'secondary', disabled: offset === 0 ? true : null, onclick: () => run(Math.max(0, offset - query.limit)), text: '← Previous page' }),
      el('button', { type: 'button', class: 'secondary', disabled: r.has_more ? null : true, onclick: () => run(offset + query.limit), text: 'Next page →' }),
    );
    results.replaceChildren(
      pager,
      table(
        'Query results',
        r.columns,
        r.rows.map((row) =>
          row.map((v, i) => (urlColumns.has(r.columns[i]) && typeof v === 'string' && /^https?:\/\//.test(v) ? recordLink(v) : v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v))),
        ),
      ),
    );
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    run(0);
  });
  setScreen('Query', 'query', el('h1', { text: 'Query' }), panel('SQL over the crawl', 'query-panel', form, error), panel('Results', 'query-results-panel', results));
}

async function downloadCsv(form, error) {
  error.replaceChildren();
  const res = await api('POST', '/api/v1/query/csv', { sql: form.elements.sql.value });
  if (res.status !== 200) {
    error.replaceChildren(el('p', { class: 'alert', text: `DuckDB: ${res.body?.error?.reason ?? errorText(res.body)}` }));
    return;
  }
  const href = URL.createObjectURL(res.body);
  const a = el('a', { href, download: 'query.csv', class: 'visually-hidden', text: 'query.csv' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  announce('Downloaded query.csv');
}

// ---- a page as archived --------------------------------------------------------

async function recordScreen(params) {
  const url = params.get('url');
  const fetchId = params.get('fetch_id');
  setScreen('Archived page', null, el('h1', { text: 'Archived page' }), el('p', { class: 'note', text: 'Reading the WARC record…' }));
  const res = await api('GET', `/api/v1/record?${url !== null ? `url=${encodeURIComponent(url)}` : `fetch_id=${encodeURIComponent(fetchId ?? '')}`}`);
  if (res.status !== 200) {
    setScreen('Archived page', null, el('h1', { text: 'Archived page' }), el('p', { class: 'alert', role: 'alert', text: errorText(res.body) }));
    return;
  }
  const r = res.body;
  const facts = [
    ['URL', r.url],
    ['Title', r.title ?? '—'],
    ['WARC file', r.warc_filename],
    ['Offset', num(r.warc_record_offset)],
    ['Length (gzip member)', bytes(r.warc_record_length)],
    ['Record type', r.warc_type],
    ['Fetched', r.fetch_time ?? '—'],
    ['Fetch id', r.fetch_id ?? '—'],
    ['Body', `${bytes(r.payload_bytes)}${r.content_mime_type ? `, ${r.content_mime_type}` : ''}`],
    ['Same with the CLI', `crawl get ${r.fetch_id ? `--fetch-id ${r.fetch_id}` : `'${r.url}'`}`],
  ];
  setScreen(
    'Archived page',
    null,
    el('h1', { text: 'Archived page' }),
    panel('Record', 'record-facts', el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]))),
    panel('WARC headers', 'record-warc', el('pre', { tabindex: 0, text: r.warc_headers })),
    r.http_headers ? panel('HTTP headers', 'record-http', el('pre', { tabindex: 0, text: r.http_headers })) : null,
    r.text ? panel('Extracted text', 'record-text', el('pre', { tabindex: 0, text: r.text })) : null,
    panel(
      'Body as stored',
      'record-body',
      r.payload_truncated ? el('p', { class: 'note', text: `The first ${bytes(r.payload.length)} of ${bytes(r.payload_bytes)}.` }) : null,
      el('pre', { tabindex: 0, text: r.payload || '(empty)' }),
    ),
  );
}

// ---- routing ---------------------------------------------------------------------

/** `moved`: the user went to another screen, so the focus goes to its content (a screen reader starts there). */
function route(moved) {
  stopPolling();
  screenToken++;
  const hash = location.hash.replace(/^#/, '') || '/jobs';
  const [pathPart, search] = hash.split('?');
  const job = /^\/jobs\/([^/]+)$/.exec(pathPart);
  if (job) jobScreen(decodeURIComponent(job[1]));
  else if (pathPart === '/query') queryScreen();
  else if (pathPart === '/record') recordScreen(new URLSearchParams(search ?? ''));
  else jobsScreen();
  if (moved) main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => route(true));
route(false);
