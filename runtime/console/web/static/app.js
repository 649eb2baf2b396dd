// The console: an ordinary API client (docs/console.md). Credentials live
// only in this module's memory; every request carries them explicitly.
import { h, render } from 'preact';
import { useState, useEffect, useRef } from 'preact/hooks';
import htm from 'htm';
import { can, uiAllows, modelsOf, apiVersion, modelHash, get, set, resolve, defaults } from './schema.js';

const html = htm.bind(h);
const B = document.querySelector('meta[name="svc-brand"]').content || 'svc.run';
const CONSOLE = `/apis/api.console.${B}/v1alpha1`;
const L = {
  template: `${B}/role-template`, hidden: `${B}/hidden`,
  display: `rbac.authorization.${B}/display-name`, deps: `rbac.authorization.${B}/dependencies`,
  plugin: `plugin.${B}/plugin-name`, token: `security.${B}/access-token`,
};
window.__consoleStart = performance.now();

let auth = null; // "Basic …", in memory only: a reload signs out

class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `HTTP ${status}`);
    this.status = status; this.body = body || {};
  }
}

async function api(method, path, body) {
  const headers = { 'X-Requested-With': 'XMLHttpRequest', Accept: 'application/json' };
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { title: r.statusText, detail: text.slice(0, 300) }; }
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

// The credential rides in a subprotocol: a browser cannot set headers on a
// WebSocket (docs/api.md).
function openWatch(path, onEvent) {
  const b64 = btoa(auth).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}${path.includes('?') ? '&' : '?'}watch=true`;
  const ws = new WebSocket(url, ['svc.watch', 'svc.authorization.' + b64]);
  ws.onmessage = (e) => { try { onEvent(JSON.parse(e.data)); } catch { /* not an event */ } };
  return ws;
}

// ---- small pieces
function Problem({ err }) {
  if (!err) return null;
  const b = err.body || {};
  return html`<div class="problem" data-testid="problem">
    <strong>${b.title || err.message || 'Error'}</strong>${b.status ? ` (${b.status})` : ''}
    ${b.detail && b.detail !== b.title ? html`<div>${b.detail}</div>` : null}
    ${(b.errors || []).length ? html`<ul>${b.errors.map((e) => html`<li><code>${e.field}</code>: ${e.message}</li>`)}</ul>` : null}
  </div>`;
}
const NotAllowed = ({ what }) => html`<div class="notice" data-testid="not-allowed">Not allowed: your roles do not let you ${what}.</div>`;
const Labels = ({ labels }) => Object.entries(labels || {}).map(([k, v]) => html`<span class="label">${k}=${v}</span>`);
const kv = (o) => Object.entries(o || {}).map(([k, v]) => `${k}=${v}`).join('\n');
function parseKV(text, what) {
  const o = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const i = line.indexOf('=');
    if (i <= 0) throw new ApiError(400, { title: `${what}: each line is key=value`, detail: `not key=value: ${line}` });
    o[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return o;
}
function useLoad(fn, deps) {
  const [st, setSt] = useState({ loading: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    fn().then((data) => live && setSt({ data }), (err) => live && setSt({ err }));
    return () => { live = false; };
  }, [...deps, n]);
  return [st, () => setN((x) => x + 1)];
}

// ---- sign in
function SignIn({ onIn }) {
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(e) {
    e.preventDefault();
    const f = new FormData(e.target);
    auth = 'Basic ' + btoa(unescape(encodeURIComponent(`${f.get('username')}:${f.get('password')}`)));
    setBusy(true);
    try {
      const [me, perms, doc] = await Promise.all([api('GET', `${CONSOLE}/users/-`), api('GET', `${CONSOLE}/users/-/permissions`), api('GET', '/openapi.json')]);
      onIn({ me, perms, doc, models: modelsOf(doc) });
    } catch (x) { auth = null; setErr(x); setBusy(false); }
  }
  return html`<form class="card signin" onSubmit=${submit} data-testid="signin">
    <h2>Sign in</h2>
    <p class="muted">${B}</p>
    <label>User name <input name="username" autocomplete="username" required data-testid="username" /></label>
    <label>Password <input name="password" type="password" autocomplete="current-password" required data-testid="password" /></label>
    <${Problem} err=${err} />
    <button class="primary" disabled=${busy} data-testid="signin-submit">Sign in</button>
  </form>`;
}

// ---- list
const OPS = ['=', '!=', '<', '<=', '>', '>='];
function scalarColumns(m) {
  const props = (m.schema.properties.spec || {}).properties || {};
  return Object.entries(props).filter(([, s]) => ['string', 'integer', 'number', 'boolean'].includes(s.type)).slice(0, 4).map(([k]) => `spec.${k}`);
}
function ListView({ s, m }) {
  const [q, setQ] = useState({ page: 1, size: 20, label: '', fields: [], sort: '', dir: 'asc' });
  const [draft, setDraft] = useState({ label: '', fields: [], sort: '', dir: 'asc' });
  const [live, setLive] = useState(false);
  const params = new URLSearchParams({ page: q.page, size: q.size });
  if (q.label) params.set('labelSelector', q.label);
  for (const f of q.fields) if (f.value !== '') params.append('fieldSelector', `${f.field}${f.op}${f.value}`);
  if (q.sort) params.append('sort', `${q.sort},${q.dir}`);
  const [st, reload] = useLoad(() => api('GET', `${m.base}?${params}`), [m.base, params.toString()]);
  const reloadRef = useRef(reload); reloadRef.current = reload;
  useEffect(() => {
    // Any change reloads the page shown: rows appear, change and go in the
    // list's own order and filter, and paging stays right.
    let t = null;
    const w = new URLSearchParams(); if (q.label) w.set('labelSelector', q.label);
    for (const f of q.fields) if (f.value !== '') w.append('fieldSelector', `${f.field}${f.op}${f.value}`);
    const ws = openWatch(`${m.base}?${w}`, () => { clearTimeout(t); t = setTimeout(() => reloadRef.current(), 150); });
    ws.onopen = () => setLive(true); ws.onclose = () => setLive(false);
    return () => { clearTimeout(t); ws.onclose = null; ws.close(); };
  }, [m.base, q.label, JSON.stringify(q.fields)]);
  const cols = scalarColumns(m);
  const apply = (e) => { e.preventDefault(); setQ({ ...q, ...draft, page: 1 }); };
  const setField = (i, k, v) => setDraft({ ...draft, fields: draft.fields.map((f, j) => (j === i ? { ...f, [k]: v } : f)) });
  const list = st.data;
  return html`<div data-testid="list-view">
    <h2>${m.kind} <span class="muted">${apiVersion(m)}</span> ${live ? html`<span class="live" data-testid="live">● live</span>` : null}</h2>
    <form class="toolbar" onSubmit=${apply}>
      <input placeholder="label selector, e.g. team=blue" value=${draft.label} onInput=${(e) => setDraft({ ...draft, label: e.target.value })} data-testid="label-selector" />
      ${draft.fields.map((f, i) => html`<span>
        <select value=${f.field} onChange=${(e) => setField(i, 'field', e.target.value)} data-testid="field-name">${m.indexes.map((x) => html`<option value=${x}>${x}</option>`)}</select>
        <select value=${f.op} onChange=${(e) => setField(i, 'op', e.target.value)} data-testid="field-op">${OPS.map((x) => html`<option value=${x}>${x}</option>`)}</select>
        <input value=${f.value} onInput=${(e) => setField(i, 'value', e.target.value)} data-testid="field-value" size="10" />
      </span>`)}
      <button type="button" onClick=${() => setDraft({ ...draft, fields: [...draft.fields, { field: m.indexes[0], op: '=', value: '' }] })} data-testid="add-field">+ field</button>
      sort <select value=${draft.sort} onChange=${(e) => setDraft({ ...draft, sort: e.target.value })} data-testid="sort">
        <option value="">(newest first)</option>${m.indexes.map((x) => html`<option value=${x}>${x}</option>`)}</select>
      <select value=${draft.dir} onChange=${(e) => setDraft({ ...draft, dir: e.target.value })} data-testid="sort-dir"><option value="asc">asc</option><option value="desc">desc</option></select>
      <button class="primary" data-testid="apply">Apply</button>
      ${can(s.perms, 'create', m.group, m.plural) ? html`<a href="${modelHash(m)}/-new"><button type="button" data-testid="create">Create ${m.kind}</button></a>` : null}
    </form>
    <${Problem} err=${st.err} />
    ${list ? html`<table data-testid="list">
      <thead><tr><th>name</th>${cols.map((c) => html`<th>${c.slice(5)}</th>`)}<th>labels</th><th>created</th><th>version</th></tr></thead>
      <tbody>${list.items.map((o) => html`<tr data-testid="row" data-name=${o.metadata.name}>
        <td><a href="${modelHash(m)}/${encodeURIComponent(o.metadata.name)}">${o.metadata.name}</a></td>
        ${cols.map((c) => html`<td>${String(get(o, c) ?? '')}</td>`)}
        <td><${Labels} labels=${o.metadata.labels} /></td><td>${o.metadata.creationTimestamp}</td><td>${o.metadata.version}</td></tr>`)}</tbody>
    </table>
    <div class="toolbar">
      <button disabled=${!list.hasPrevious} onClick=${() => setQ({ ...q, page: q.page - 1 })} data-testid="prev">Previous</button>
      <span data-testid="paging">page ${list.page} of ${list.totalPages} · ${list.total} total</span>
      <button disabled=${!list.hasNext} onClick=${() => setQ({ ...q, page: q.page + 1 })} data-testid="next">Next</button>
    </div>` : st.loading ? html`<p class="muted">Loading…</p>` : null}
  </div>`;
}

// ---- object form
function refTarget(s, models) {
  const match = /Name of another (\w+)/.exec(s.description || '');
  return match && models.find((x) => x.kind === match[1]);
}
function Field({ st, path, schema, obj, setObj, errs, ro, indexed, required }) {
  const s = resolve(st.doc, schema);
  const name = path.split('.').pop();
  const v = get(obj, path);
  const err = errs.filter((e) => e.field === path || e.field.startsWith(path + '[')).map((e) => html`<div class="fielderr" data-testid=${'err-' + path}>${e.message}</div>`);
  const put = (x) => { const o = structuredClone(obj); set(o, path, x); setObj(o); };
  if (s.type === 'object' && s.properties) {
    return html`<fieldset><legend>${name}</legend>${Object.entries(s.properties).map(([k, p]) => html`<${Field} st=${st} path=${path + '.' + k} schema=${p} obj=${obj} setObj=${setObj} errs=${errs} ro=${ro} indexed=${indexed} required=${(s.required || []).includes(k)} />`)}${err}</fieldset>`;
  }
  const tid = 'f-' + path;
  let input;
  let link = null;
  const hint = [];
  if (s.minimum !== undefined) hint.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) hint.push(`≤ ${s.maximum}`);
  if (s.maxLength !== undefined) hint.push(`at most ${s.maxLength} characters`);
  if (s.enum) {
    input = html`<select disabled=${ro} value=${v ?? ''} onChange=${(e) => put(e.target.value || undefined)} data-testid=${tid}><option value="">—</option>${s.enum.map((x) => html`<option value=${x}>${x}</option>`)}</select>`;
  } else if (s.type === 'boolean') {
    input = html`<input type="checkbox" disabled=${ro} checked=${!!v} onChange=${(e) => put(e.target.checked)} data-testid=${tid} />`;
  } else if (s.type === 'integer' || s.type === 'number') {
    input = html`<input type="number" disabled=${ro} min=${s.minimum} max=${s.maximum} step=${s.type === 'integer' ? 1 : 'any'} value=${v ?? ''} data-testid=${tid}
      onInput=${(e) => put(e.target.value === '' ? undefined : Number(e.target.value))} />`;
  } else if (s.type === 'array' && ['string', 'integer', 'number', 'boolean'].includes(resolve(st.doc, s.items).type)) {
    const it = resolve(st.doc, s.items).type;
    hint.push('one per line');
    input = html`<textarea disabled=${ro} value=${(v || []).join('\n')} data-testid=${tid} onInput=${(e) => {
      const xs = e.target.value.split('\n').map((x) => x.trim()).filter(Boolean);
      put(xs.length ? xs.map((x) => (it === 'string' ? x : it === 'boolean' ? x === 'true' : Number(x))) : undefined);
    }}></textarea>`;
  } else if (s.type === 'string') {
    const type = s.format === 'date-time' ? 'datetime-local' : s.format === 'email' ? 'email' : s.format === 'password' ? 'password' : 'text';
    const shown = type === 'datetime-local' && v ? v.slice(0, 19) : v ?? '';
    input = html`<input type=${type} disabled=${ro} value=${shown} maxlength=${s.maxLength} data-testid=${tid}
      onInput=${(e) => put(e.target.value === '' ? undefined : type === 'datetime-local' ? new Date(e.target.value).toISOString() : e.target.value)} />`;
    // The link sits beside the input, never around it: wrapping would
    // remount the input and lose its focus mid-typing.
    const target = indexed.includes(path) && refTarget(s, st.models);
    if (target && v) link = html`<a href="${modelHash(target)}/${encodeURIComponent(v)}" data-testid=${'ref-' + path}>open ${target.kind} ${v}</a>`;
  } else {
    return html`<div class="field"><label>${name}</label><span class="muted">edit in the JSON tab</span>${err}</div>`;
  }
  return html`<div class="field"><label>${name}${required ? html` <span class="error" title="required">*</span>` : null}</label>${input} ${link} ${hint.length ? html`<span class="hint">${hint.join(', ')}</span>` : null}
    ${s.description ? html`<div class="hint">${s.description}</div>` : null}${err}</div>`;
}

function ObjectView({ s, m, name }) {
  const creating = name === '-new';
  const mayUpdate = can(s.perms, 'update', m.group, m.plural, name);
  const mayDelete = can(s.perms, 'delete', m.group, m.plural, name);
  const [obj, setObj] = useState(null);
  const [err, setErr] = useState(null);
  const [msg, setMsg] = useState(null);
  const [tab, setTab] = useState('form');
  const [raw, setRaw] = useState('');
  const [confirm, setConfirm] = useState(false);
  const [n, setN] = useState(0);
  useEffect(() => {
    setErr(null); setMsg(null); setConfirm(false);
    if (creating) {
      setObj({ apiVersion: apiVersion(m), kind: m.kind, metadata: { name: '' }, spec: defaults(s.doc, m.schema.properties.spec) || {} });
      return;
    }
    setObj(null);
    api('GET', `${m.base}/${encodeURIComponent(name)}`).then(setObj, setErr);
  }, [m.base, name, n]);
  if (creating && !can(s.perms, 'create', m.group, m.plural)) return html`<${NotAllowed} what=${`create ${m.plural}`} />`;
  if (!obj) return html`<div><${Problem} err=${err} />${err ? null : html`<p class="muted">Loading…</p>`}</div>`;
  const ro = !creating && !mayUpdate;
  const errs = (err && err.status === 400 && err.body.errors) || [];
  async function save() {
    setErr(null); setMsg(null);
    try {
      let body = obj;
      if (tab === 'json') body = JSON.parse(raw);
      const saved = creating ? await api('POST', m.base, body) : await api('PUT', `${m.base}/${encodeURIComponent(name)}`, body);
      if (creating) { location.hash = `${modelHash(m)}/${encodeURIComponent(saved.metadata.name)}`; return; }
      setObj(saved); setRaw(JSON.stringify(saved, null, 2)); setMsg('Saved.');
    } catch (x) {
      setErr(x instanceof SyntaxError ? new ApiError(400, { title: 'The JSON does not parse', detail: x.message }) : x);
    }
  }
  async function del() {
    try { await api('DELETE', `${m.base}/${encodeURIComponent(name)}`); location.hash = modelHash(m); } catch (x) { setErr(x); }
  }
  const meta = (key) => html`<div class="field"><label>${key}</label>
    <textarea disabled=${ro} value=${kv(obj.metadata[key])} data-testid=${'f-metadata.' + key} placeholder="key=value, one per line"
      onChange=${(e) => { try { setObj({ ...obj, metadata: { ...obj.metadata, [key]: parseKV(e.target.value, key) } }); } catch (x) { setErr(x); } }}></textarea>
    ${errs.filter((e) => e.field.startsWith('metadata.' + key)).map((e) => html`<div class="fielderr">${e.message}</div>`)}</div>`;
  return html`<div data-testid="object-view">
    <h2><a href=${modelHash(m)}>${m.kind}</a> / ${creating ? 'new' : name}</h2>
    ${ro ? html`<p class="muted" data-testid="read-only">Read only: your roles do not let you change it.</p>` : null}
    <div class="toolbar">
      <button class=${tab === 'form' ? 'primary' : ''} onClick=${() => { if (tab === 'json') { try { setObj(JSON.parse(raw)); } catch (x) { setErr(new ApiError(400, { title: 'The JSON does not parse', detail: x.message })); return; } } setTab('form'); }} data-testid="tab-form">Form</button>
      <button class=${tab === 'json' ? 'primary' : ''} onClick=${() => { setRaw(JSON.stringify(obj, null, 2)); setTab('json'); }} data-testid="tab-json">JSON</button>
    </div>
    ${err && err.status === 409 ? html`<div class="problem" data-testid="conflict"><strong>Changed by someone else</strong> since you opened it: reload to see their change, then edit again.
      <button onClick=${() => setN(n + 1)} data-testid="reload">Reload</button></div>` : html`<${Problem} err=${err} />`}
    ${msg ? html`<div class="notice" data-testid="saved">${msg}</div>` : null}
    <div class="card form">
    ${tab === 'json' ? html`<textarea style="min-height:24em" value=${raw} onInput=${(e) => setRaw(e.target.value)} disabled=${ro} data-testid="raw"></textarea>` : html`
      ${creating ? html`<div class="field"><label>name</label><input value=${obj.metadata.name} data-testid="f-metadata.name" onInput=${(e) => setObj({ ...obj, metadata: { ...obj.metadata, name: e.target.value } })} />
        ${errs.filter((e) => e.field === 'metadata.name').map((e) => html`<div class="fielderr" data-testid="err-metadata.name">${e.message}</div>`)}</div>`
      : html`<p class="muted">version ${obj.metadata.version} · created ${obj.metadata.creationTimestamp}</p>`}
      ${meta('labels')}${meta('annotations')}
      <${Field} st=${s} path="spec" schema=${m.schema.properties.spec} obj=${obj} setObj=${setObj} errs=${errs} ro=${ro} indexed=${(m.schema['x-svc-indexes'] || []).map((i) => i.field)} />
      ${obj.status ? html`<h4>status</h4><pre>${JSON.stringify(obj.status, null, 2)}</pre>` : null}`}
    </div>
    <div class="toolbar">
      ${creating || mayUpdate ? html`<button class="primary" onClick=${save} data-testid="save">${creating ? 'Create' : 'Save'}</button>` : null}
      ${!creating && mayDelete ? (confirm
        ? html`<span>Delete ${name}? <button class="danger" onClick=${del} data-testid="confirm-delete">Yes, delete</button> <button onClick=${() => setConfirm(false)}>Cancel</button></span>`
        : html`<button class="danger" onClick=${() => setConfirm(true)} data-testid="delete">Delete</button>`) : null}
    </div>
  </div>`;
}

// ---- access control
const display = (r) => (r.metadata.annotations || {})[L.display] || r.metadata.name;
const deps = (r) => { try { return JSON.parse((r.metadata.annotations || {})[L.deps] || '[]'); } catch { return []; } };
function Access({ s }) {
  const mayUsers = can(s.perms, 'list', '', 'users');
  const [st, reload] = useLoad(async () => {
    const [users, roles, bindings] = await Promise.all([
      mayUsers ? api('GET', '/api/v1alpha1/users?size=200') : null,
      can(s.perms, 'list', '', 'roles') ? api('GET', '/api/v1alpha1/roles?size=500') : null,
      can(s.perms, 'list', '', 'rolebindings') ? api('GET', '/api/v1alpha1/rolebindings?size=500') : null]);
    return { users, roles, bindings };
  }, []);
  const [err, setErr] = useState(null);
  const [sel, setSel] = useState(null);
  if (!mayUsers && !can(s.perms, 'list', '', 'roles')) return html`<${NotAllowed} what="see users or roles" />`;
  if (!st.data) return html`<${Problem} err=${st.err} />`;
  const { users, roles, bindings } = st.data;
  const templates = (roles ? roles.items : []).filter((r) => (r.metadata.labels || {})[L.template] === 'true' && (r.metadata.labels || {})[L.hidden] !== 'true');
  const act = (f) => async (e) => { e && e.preventDefault && e.preventDefault(); setErr(null); try { await f(e); reload(); } catch (x) { setErr(x); } };
  const create = act(async (e) => {
    const f = new FormData(e.target);
    await api('POST', `${CONSOLE}/users`, { name: f.get('name'), password: f.get('password'), displayName: f.get('displayName') || undefined, roles: [] });
    e.target.reset();
  });
  return html`<div data-testid="access">
    <h2>Access control</h2><${Problem} err=${err} />
    ${users ? html`<h3>Users</h3>
    <table data-testid="users"><thead><tr><th>name</th><th>display name</th><th></th></tr></thead><tbody>
      ${users.items.map((u) => html`<tr data-testid="user-row" data-name=${u.metadata.name}><td>${u.metadata.name}</td><td>${u.spec.displayName || ''}</td><td>
        <button onClick=${() => setSel(u.metadata.name)} data-testid="user-roles">Roles</button>
        <button onClick=${act(async () => { const pw = document.querySelector(`[data-pw="${u.metadata.name}"]`).value; await api('PUT', `${CONSOLE}/users/${u.metadata.name}/password`, { password: pw }); })} data-testid="set-password">Set password</button>
        <input type="password" placeholder="new password" data-pw=${u.metadata.name} size="12" />
        ${can(s.perms, 'delete', '', 'users') && u.metadata.name !== s.me.user.metadata.name ? html`<button class="danger" onClick=${act(() => api('DELETE', `/api/v1alpha1/users/${u.metadata.name}`))} data-testid="delete-user">Delete</button>` : null}
      </td></tr>`)}</tbody></table>
    ${can(s.perms, 'create', `api.console.${B}`, 'users') ? html`<form class="toolbar" onSubmit=${create} data-testid="new-user">
      <input name="name" placeholder="user name" required data-testid="new-user-name" /><input name="displayName" placeholder="display name" />
      <input name="password" type="password" placeholder="password" required data-testid="new-user-password" /><button class="primary" data-testid="new-user-submit">Create user</button></form>` : null}
    ${sel ? html`<${Grant} key=${sel} user=${sel} templates=${templates} onDone=${() => { setSel(null); reload(); }} />` : null}` : null}
    ${roles ? html`<h3>Role templates</h3><table data-testid="templates"><thead><tr><th>name</th><th>display name</th><th>depends on</th></tr></thead><tbody>
      ${templates.map((r) => html`<tr><td>${r.metadata.name}</td><td>${display(r)}</td><td>${deps(r).join(', ')}</td></tr>`)}</tbody></table>
      <h3>Roles</h3><table><thead><tr><th>name</th><th>display name</th><th>rules</th></tr></thead><tbody>
      ${roles.items.map((r) => html`<tr><td>${r.metadata.name}</td><td>${display(r)}</td><td><code>${(r.rules || []).map((x) => `${(x.verbs || []).join(',')} ${(x.apiGroups || []).join(',')}/${(x.resources || x.nonResourceURLs || []).join(',')}`).join('; ')}</code></td></tr>`)}</tbody></table>` : null}
    ${bindings ? html`<h3>Role bindings</h3><table><thead><tr><th>name</th><th>role</th><th>subjects</th></tr></thead><tbody>
      ${bindings.items.map((b) => html`<tr><td>${b.metadata.name}</td><td>${(b.roleRef || {}).name}</td><td>${(b.subjects || []).map((x) => x.name).join(', ')}</td></tr>`)}</tbody></table>` : null}
  </div>`;
}
function Grant({ user, templates, onDone }) {
  const [st] = useLoad(() => api('GET', `${CONSOLE}/users/${encodeURIComponent(user)}`), [user]);
  const [chosen, setChosen] = useState(null);
  const [err, setErr] = useState(null);
  useEffect(() => { if (st.data) setChosen(new Set(st.data.roles.map((r) => r.metadata.name))); }, [st.data]);
  if (!chosen) return html`<${Problem} err=${st.err} />`;
  const toggle = (n) => { const c = new Set(chosen); c.has(n) ? c.delete(n) : c.add(n); setChosen(c); };
  const save = async () => { try { await api('POST', `${CONSOLE}/users/${encodeURIComponent(user)}/permissions`, { roles: [...chosen] }); onDone(); } catch (x) { setErr(x); } };
  return html`<div class="card" data-testid="grant"><h4>Roles of ${user}</h4><${Problem} err=${err} />
    ${templates.map((r) => html`<label style="display:block"><input type="checkbox" checked=${chosen.has(r.metadata.name)} onChange=${() => toggle(r.metadata.name)} data-testid=${'grant-' + r.metadata.name} />
      ${display(r)} <span class="muted">${r.metadata.name}${deps(r).length ? ` · needs ${deps(r).join(', ')}` : ''}</span></label>`)}
    <button class="primary" onClick=${save} data-testid="grant-save">Save roles</button></div>`;
}

// ---- tokens
function Tokens({ s }) {
  const base = `${CONSOLE}/users/-/personalaccesstokens`;
  const [st, reload] = useLoad(() => api('GET', base), []);
  const [err, setErr] = useState(null);
  const [fresh, setFresh] = useState(null);
  const act = (f) => async (e) => { e && e.preventDefault && e.preventDefault(); setErr(null); try { await f(e); reload(); } catch (x) { setErr(x); } };
  const create = act(async (e) => {
    const f = new FormData(e.target);
    const t = await api('POST', base, { metadata: { name: f.get('name') }, spec: { name: f.get('name'), roles: f.getAll('roles') } });
    setFresh(t.metadata.annotations[L.token]); e.target.reset();
  });
  const items = (st.data && st.data.items) || [];
  return html`<div data-testid="tokens"><h2>Personal access tokens</h2><${Problem} err=${err || st.err} />
    ${fresh ? html`<div class="notice">Copy the token now: it is shown only once.<div class="token" data-testid="new-token">${fresh}</div></div>` : null}
    <table><thead><tr><th>name</th><th>roles</th><th>state</th><th></th></tr></thead><tbody>
    ${items.map((t) => html`<tr data-testid="token-row" data-name=${t.metadata.name}><td>${t.metadata.name}</td><td>${(t.spec.roles || []).join(', ')}</td>
      <td data-testid="token-state">${t.spec.revoked ? 'revoked' : 'active'}</td><td>
      ${t.spec.revoked ? null : html`<button onClick=${act(() => api('PUT', `${base}/${t.metadata.name}/revocation`))} data-testid="revoke">Revoke</button>`}
      <button class="danger" onClick=${act(() => api('DELETE', `${base}/${t.metadata.name}`))} data-testid="delete-token">Delete</button></td></tr>`)}</tbody></table>
    <form class="card" onSubmit=${create} data-testid="new-token-form"><h4>New token</h4>
      <input name="name" placeholder="name" required data-testid="token-name" />
      <div>Limited to: ${s.perms.roles.map((r) => html`<label style="margin-right:1em"><input type="checkbox" name="roles" value=${r.metadata.name} /> ${display(r)}</label>`)}</div>
      <button class="primary" data-testid="token-create">Create token</button></form>
  </div>`;
}

// ---- plugins
function Plugins({ s }) {
  const [st, reload] = useLoad(async () => {
    const plugins = await api('GET', '/api/v1alpha1/plugins?size=200');
    const roles = can(s.perms, 'list', '', 'roles') ? await api('GET', `/api/v1alpha1/roles?size=500&labelSelector=${encodeURIComponent(L.plugin)}`) : null;
    return { plugins, roles };
  }, []);
  const [err, setErr] = useState(null);
  useEffect(() => {
    const ws = openWatch('/api/v1alpha1/plugins', () => reload());
    return () => ws.close();
  }, []);
  if (!can(s.perms, 'list', '', 'plugins')) return html`<${NotAllowed} what="list plugins" />`;
  if (!st.data) return html`<${Problem} err=${st.err} />`;
  const mayUpdate = can(s.perms, 'update', '', 'plugins');
  const toggle = async (p) => {
    setErr(null);
    try { const o = structuredClone(p); o.spec.enabled = !p.spec.enabled; await api('PUT', `/api/v1alpha1/plugins/${p.metadata.name}`, o); reload(); } catch (x) { setErr(x); }
  };
  return html`<div data-testid="plugins"><h2>Plugins</h2><${Problem} err=${err} />
    <table><thead><tr><th>name</th><th>version</th><th>enabled</th><th>phase</th><th>message</th><th></th></tr></thead><tbody>
    ${st.data.plugins.items.map((p) => html`<tr data-testid="plugin-row" data-name=${p.metadata.name}><td>${p.spec.displayName || p.metadata.name}</td><td>${p.spec.version}</td>
      <td>${p.spec.enabled ? 'yes' : 'no'}</td><td data-testid="plugin-phase">${(p.status || {}).phase}</td><td>${(p.status || {}).message}</td>
      <td>${mayUpdate ? html`<button onClick=${() => toggle(p)} data-testid=${p.spec.enabled ? 'plugin-stop' : 'plugin-start'}>${p.spec.enabled ? 'Stop' : 'Start'}</button>` : null}</td></tr>`)}
    </tbody></table>
    ${st.data.roles ? st.data.plugins.items.map((p) => {
      const ts = st.data.roles.items.filter((r) => r.metadata.labels[L.plugin] === p.metadata.name);
      return html`<h3>Access matrix of ${p.metadata.name}</h3><table data-testid="matrix"><thead><tr><th>role template</th><th>grants</th></tr></thead><tbody>
        ${ts.length ? null : html`<tr><td colspan="2" class="muted">No role template names this plugin (label ${L.plugin}).</td></tr>`}
        ${ts.map((r) => html`<tr><td>${display(r)} <span class="muted">${r.metadata.name}</span></td><td>${(r.rules || []).map((x) => html`<div>${(x.verbs || []).join(', ')} on ${(x.resources || []).join(', ')} <span class="muted">${(x.apiGroups || []).join(',')}</span></div>`)}</td></tr>`)}</tbody></table>`;
    }) : null}
  </div>`;
}

// ---- shell
function route() { return location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent); }
function Shell({ s, onOut }) {
  const [r, setR] = useState(route());
  useEffect(() => { const f = () => setR(route()); addEventListener('hashchange', f); return () => removeEventListener('hashchange', f); }, []);
  const visible = s.models.filter((m) => can(s.perms, 'list', m.group, m.plural) && uiAllows(s.perms, m.group, L.plugin));
  const groups = {};
  for (const m of visible) (groups[m.group || 'core'] ||= []).push(m);
  let body;
  if (r[0] === 'm') {
    const m = s.models.find((x) => (x.group || '_') === r[1] && x.version === r[2] && x.plural === r[3]);
    if (!m) body = html`<div class="problem">No such model.</div>`;
    else if (r[4]) body = html`<${ObjectView} s=${s} m=${m} name=${r[4]} key=${r.join('/')} />`;
    else body = can(s.perms, 'list', m.group, m.plural) ? html`<${ListView} s=${s} m=${m} key=${m.base} />` : html`<${NotAllowed} what=${`list ${m.plural}`} />`;
  } else if (r[0] === 'access') body = html`<${Access} s=${s} />`;
  else if (r[0] === 'tokens') body = html`<${Tokens} s=${s} />`;
  else if (r[0] === 'plugins') body = html`<${Plugins} s=${s} />`;
  else if (!s.perms.roles.length) body = html`<div class="notice" data-testid="no-roles">You are signed in, but no role is bound to you, so there is nothing to show yet. Ask an administrator to grant you a role.</div>`;
  else body = html`<div data-testid="home"><h2>Welcome, ${s.me.user.spec.displayName || s.me.user.metadata.name}</h2><p class="muted">Pick a model on the left. You see what your roles let you list.</p></div>`;
  const u = s.me.user;
  return html`<div>
    <header><span class="brand">Console · ${B}</span><span data-testid="whoami">${u.spec.displayName || u.metadata.name} (${u.metadata.name})</span>
      <button onClick=${onOut} data-testid="signout">Sign out</button></header>
    <div class="layout"><nav data-testid="nav">
      <a href="#/">Home</a>
      ${Object.entries(groups).map(([g, ms]) => html`<h4>${g}</h4>${ms.map((m) => html`<a href=${modelHash(m)} data-testid=${'nav-' + m.plural}>${m.kind}</a>`)}`)}
      ${can(s.perms, 'list', '', 'users') || can(s.perms, 'list', '', 'roles') ? html`<h4>Access</h4><a href="#/access" data-testid="nav-access">Users and roles</a>` : null}
      <h4>You</h4><a href="#/tokens" data-testid="nav-tokens">Access tokens</a>
      ${can(s.perms, 'list', '', 'plugins') ? html`<a href="#/plugins" data-testid="nav-plugins">Plugins</a>` : null}
    </nav><main>${body}</main></div></div>`;
}

function App() {
  const [s, setS] = useState(null);
  useEffect(() => { window.__consoleRendered = performance.now(); }, []);
  if (!s) return html`<${SignIn} onIn=${setS} />`;
  return html`<${Shell} s=${s} onOut=${() => { auth = null; setS(null); location.hash = '#/'; }} />`;
}

render(html`<${App} />`, document.getElementById('app'));
