// What the console reads from the schemas and the caller's permissions:
// pure functions, kept apart so a test can import them (tools/console).
// ---- RBAC, computed from users/-/permissions (convenience: the API is the guard)
export function ruleAllows(rule, verb, group, resource, name) {
  const has = (list, v) => (list || []).includes('*') || (list || []).includes(v);
  if (!has(rule.verbs, verb) || !has(rule.apiGroups, group) || !has(rule.resources, resource)) return false;
  if (rule.resourceNames && rule.resourceNames.length) return !!name && rule.resourceNames.includes(name);
  return true;
}
export function can(perms, verb, group, resource, name) {
  return (perms.permissions || []).some((r) => (r.rules || []).some((rule) => ruleAllows(rule, verb, group, resource, name)));
}
// A model of a plugin shows when the UI permissions name that plugin (or *);
// which plugin a group belongs to is read from the role templates' labels.
export function uiAllows(perms, group, pluginLabel) {
  const ui = perms.uiPermissions || [];
  if (ui.includes('*')) return true;
  const plugins = new Set();
  for (const r of perms.permissions || []) {
    const p = (r.metadata.labels || {})[pluginLabel];
    if (p && (r.rules || []).some((rule) => (rule.apiGroups || []).includes(group))) plugins.add(p);
  }
  if (!plugins.size) return true;
  return [...plugins].some((p) => ui.some((u) => u.startsWith(`plugin:${p}:`)));
}

// ---- models, from /openapi.json
export function modelsOf(doc) {
  const out = [];
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    const m = s['x-svc-model'];
    if (!m) continue;
    const base = m.group ? `/apis/${m.group}/${m.version}/${m.plural}` : `/api/${m.version}/${m.plural}`;
    if (!doc.paths[base]) continue;
    out.push({ ...m, schema: s, base, schemaName: name, indexes: ['metadata.name', 'metadata.creationTimestamp', ...(s['x-svc-indexes'] || []).map((i) => i.name)] });
  }
  return out.sort((a, b) => (a.group + a.kind).localeCompare(b.group + b.kind));
}
export const apiVersion = (m) => (m.group ? `${m.group}/${m.version}` : m.version);
export const modelHash = (m) => `#/m/${m.group || '_'}/${m.version}/${m.plural}`;
export const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? v : v[k]), o);
export function set(o, path, v) {
  const ks = path.split('.'); let c = o;
  for (const k of ks.slice(0, -1)) c = c[k] = c[k] && typeof c[k] === 'object' ? c[k] : {};
  if (v === undefined) delete c[ks[ks.length - 1]]; else c[ks[ks.length - 1]] = v;
}
export const resolve = (doc, s) => (s && s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s || {});

export function defaults(doc, schema) {
  const s = resolve(doc, schema);
  if (s.default !== undefined) return structuredClone(s.default);
  if (s.type === 'object' && s.properties) {
    const o = {};
    for (const [k, p] of Object.entries(s.properties)) { const d = defaults(doc, p); if (d !== undefined) o[k] = d; }
    return Object.keys(o).length ? o : undefined;
  }
  return undefined;
}
