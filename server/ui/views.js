// The views of the review page and what they share: a DOM builder, the API client, the toast.
// Every list is a page (the server never sends the whole store); the texts of memories are
// put in as text, never as markup.

import { wordDiff } from "/ui/diff.js";
import { lineChart, barChart } from "/ui/charts.js";

const TOKEN_KEY = "memledger-token";
export const state = { keys: null, actor: null, undo: [] };

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
}
export function hasToken() { return !!sessionStorage.getItem(TOKEN_KEY); }

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

export async function api(method, path, body) {
  const headers = { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) || ""}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["memledger-actor"] = await actor();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let doc = null;
  try { doc = text ? JSON.parse(text) : null; } catch { doc = null; }
  if (!res.ok) {
    const err = new Error(doc && doc.detail ? doc.detail : `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return doc;
}

// Whom the page's decisions are recorded for: the server's `ui:<user>` for the store's owner,
// `ui:<principal>` for a principal's token (the principal itself is the token's, not the page's).
async function actor() {
  if (!state.actor) {
    const me = await api("GET", "/v1/whoami");
    state.actor = me.owner ? (await api("GET", "/v1/status")).ui_actor : `ui:${me.principal}`;
  }
  return state.actor;
}

let toastTimer = null;
export function toast(message) {
  const t = document.getElementById("toast");
  t.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.textContent = ""; }, 6000);
}

const short = (id) => (id || "").slice(0, 12);
const when = (ts) => (ts ? ts.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : "");
const memLink = (id, text) => h("a", { href: `#/memory/${id}`, class: "id" }, text || short(id));

// The text of `a` with the words `b` lacks marked (`kind` add or del).
function diffText(a, b, kind) {
  const d = wordDiff(a, b).a;
  return d.map(([t, same]) => (same ? t : h("mark", { class: kind, title: kind === "add" ? "only in this side" : "only in this side" }, t)));
}

function sideBox(label, side, other, kind, reason, withheld) {
  if (withheld) return h("div", { class: "side" }, h("div", { class: "label" }, label), h("p", { class: "muted" }, "withheld: in a scope this token may not read"));
  if (!side) return h("div", { class: "side" }, h("div", { class: "label" }, label), h("p", { class: "muted" }, "no longer a belief"));
  const by = `${side.principal || "owner"}${side.saved_by ? ` for ${side.saved_by}` : ""}, ${side.authority || "stated"}`;
  return h("div", { class: "side" },
    h("div", { class: "label" }, label),
    h("p", { class: "text" }, other ? diffText(side.text, other.text, kind) : side.text),
    h("div", { class: "meta" }, `saved ${when(side.asserted_at)} by ${by} · v${side.version} · ${side.status} · ${side.type}`),
    h("div", { class: "meta" }, memLink(side.memory_id, `history of ${short(side.memory_id)}`)),
    reason ? h("div", { class: "meta" }, `reason: ${reason}`) : null);
}

// ---- Conflict queue -------------------------------------------------------------------------

const ACTIONS = [
  ["keep_new", "Keep new", "n"],
  ["keep_existing", "Keep existing", "e"],
  ["keep_both", "Keep both", "b"],
];

async function conflictsView(route) {
  const status = route.query.get("status") || "all";
  const pageSize = 50;
  const root = h("div");
  const select = h("select", { id: "conflict-status" },
    ...["all", "pending", "resolved"].map((s) => h("option", { value: s, selected: s === status }, s)));
  select.addEventListener("change", () => { location.hash = `#/conflicts?status=${select.value}`; });
  const list = h("div", { id: "conflict-list" });
  const more = h("button", { type: "button" }, "Show more");
  root.append(
    h("div", { class: "toolbar" }, h("label", { for: "conflict-status" }, "Status", select)),
    h("p", { class: "keys" }, h("kbd", {}, "j"), "/", h("kbd", {}, "k"), " move · ", h("kbd", {}, "n"), " keep new · ",
      h("kbd", {}, "e"), " keep existing · ", h("kbd", {}, "b"), " keep both · ", h("kbd", {}, "m"), " merge · ",
      h("kbd", {}, "u"), " revert the last decision"),
    list, more);
  let cards = [], selected = 0, offset = 0, shown = pageSize;

  function select_(i, focus = true) {
    if (!cards.length) return;
    selected = Math.max(0, Math.min(cards.length - 1, i));
    cards.forEach((c, k) => c.classList.toggle("selected", k === selected));
    if (focus) cards[selected].focus();
  }

  async function decide(card, action, mergedText) {
    const id = card.dataset.id;
    const body = { action };
    if (action === "merge") body.merged_text = mergedText;
    try {
      await api("POST", `/v1/conflicts/${id}/resolve`, body);
      state.undo.push(id);
      toast(`Resolved ${short(id)}: ${action.replace("_", " ")}. Press u to revert.`);
      await load(true);
    } catch (e) { toast(`Not resolved: ${e.message}`); }
  }

  async function revert(id) {
    try {
      await api("POST", `/v1/conflicts/${id}/revert`);
      toast(`Reverted ${short(id)}: pending again.`);
      await load(true);
    } catch (e) { toast(`Not reverted: ${e.message}`); }
  }

  function openMerge(card) {
    const editor = card.querySelector(".merge");
    if (!editor) return;
    editor.hidden = false;
    editor.querySelector("textarea").focus();
  }

  function card(c, index) {
    const incoming = c.incoming;
    const existing = c.candidates[0] ? c.candidates[0].memory : null;
    const pending = c.status === "pending";
    const node = h("article", { class: "card conflict", tabindex: "-1", dataset: { id: c.conflict_id, status: c.status },
      "aria-labelledby": `c-${c.conflict_id}` });
    node.addEventListener("click", () => select_(index, false));
    const kind = c.kind === "proposal" ? `proposal by ${c.proposed_by}` : c.kind === "authority" ? "authority conflict" : "conflict";
    const heading = h("h3", { id: `c-${c.conflict_id}` },
      h("span", { class: `status-${c.status}` }, c.status), ` · ${kind} `, h("span", { class: "id" }, short(c.conflict_id)),
      h("span", { class: "muted" }, ` · opened ${when(c.opened_at)} · settled with ${c.needs_authority || "stated"} authority`));
    const sides = h("div", { class: "sides" },
      sideBox(c.kind === "proposal" ? "Proposed" : "New", incoming, existing, "add", null, c.incoming_withheld),
      ...c.candidates.map((cand, k) => sideBox(k ? `Existing ${k + 1}` : "Existing", cand.memory, incoming, "del", cand.reason, cand.withheld)));
    const gate = h("p", { class: "meta" }, `flagged by gate ${c.gate || "?"}${c.method ? ` (${c.method})` : ""}`,
      incoming && existing ? [" · ", h("a", { href: `#/why/${incoming.memory_id}/${existing.memory_id}` }, "why")] : null);
    node.append(heading, sides, gate);
    if (pending) {
      const actions = h("div", { class: "actions" },
        ...ACTIONS.map(([action, label, key]) => h("button", { type: "button", "aria-keyshortcuts": key,
          onclick: () => decide(node, action) }, label, " ", h("kbd", { "aria-hidden": "true" }, key))),
        h("button", { type: "button", "aria-keyshortcuts": "m", onclick: () => openMerge(node) }, "Merge…", " ", h("kbd", { "aria-hidden": "true" }, "m")));
      const areaId = `merge-${c.conflict_id}`;
      const area = h("textarea", { id: areaId }, incoming ? incoming.text : "");
      const merge = h("div", { class: "merge", hidden: true },
        h("label", { for: areaId }, "What is true (becomes the next version; both sides go stale)"), area,
        h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", onclick: () => decide(node, "merge", area.value) }, "Save merge"),
          h("button", { type: "button", onclick: () => { merge.hidden = true; node.focus(); } }, "Cancel")));
      area.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); decide(node, "merge", area.value); }
        if (e.key === "Escape") { merge.hidden = true; node.focus(); }
      });
      node.append(actions, merge);
    } else if (c.resolution) {
      const r = c.resolution;
      node.append(h("p", { class: "meta" }, `resolved ${r.action} by ${r.by} (${r.principal || "owner"} for ${r.actor}) at ${when(r.resolved_at)}`),
        h("div", { class: "actions" }, h("button", { type: "button", onclick: () => revert(c.conflict_id) }, "Revert")));
    }
    return node;
  }

  async function load(keep) {
    const doc = await api("GET", `/v1/review/conflicts?status=${status}&offset=${offset}&limit=${shown}`);
    document.getElementById("pending-count").textContent = doc.pending ? String(doc.pending) : "";
    list.replaceChildren();
    cards = [];
    let group = null;
    if (!doc.conflicts.length) list.append(h("p", { class: "muted" }, "No conflicts here."));
    doc.conflicts.forEach((c) => {
      const key = `${c.status === "pending" ? "Pending" : "Resolved"} · ${c.scope}${c.fact_key ? ` · ${c.fact_key}` : ""}`;
      if (key !== group) {
        group = key;
        list.append(h("h2", { class: "group" }, key));
      }
      const node = card(c, cards.length);
      cards.push(node);
      list.append(node);
    });
    more.hidden = doc.total <= shown;
    select_(keep ? selected : 0, keep);
  }
  more.addEventListener("click", async () => { shown += pageSize; await load(true); });

  await load(false);
  state.keys = (key) => {
    const current = cards[selected];
    switch (key) {
      case "j": select_(selected + 1); return true;
      case "k": select_(selected - 1); return true;
      case "n": case "e": case "b": {
        if (!current || current.dataset.status !== "pending") return false;
        decide(current, { n: "keep_new", e: "keep_existing", b: "keep_both" }[key]);
        return true;
      }
      case "m": if (current) openMerge(current); return true;
      case "u": {
        const last = state.undo.pop();
        if (last) revert(last); else toast("Nothing to revert: no decision made on this page yet.");
        return true;
      }
      default: return false;
    }
  };
  return root;
}

// ---- Memories -------------------------------------------------------------------------------

async function memoriesView(route) {
  const q = route.query;
  const field = (id, label, input) => h("label", { for: id }, label, input);
  const search = h("input", { id: "q", type: "search", value: q.get("q") || "", placeholder: "words to recall" });
  const type = h("select", { id: "type" }, ...["", "fact", "preference", "episode", "procedure"].map((t) =>
    h("option", { value: t, selected: t === (q.get("type") || "") }, t || "any type")));
  const scope = h("input", { id: "scope", value: q.get("scope") || "", placeholder: "any scope" });
  const status = h("select", { id: "status" }, ...["active", "stale", "retired", "all"].map((s) =>
    h("option", { value: s, selected: s === (q.get("status") || "active") }, s)));
  const form = h("form", { class: "toolbar", role: "search" },
    field("q", "Search (recall)", search), field("type", "Type", type), field("scope", "Scope", scope),
    field("status", "Status (list)", status), h("button", { class: "primary", type: "submit" }, "Search"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (search.value.trim()) p.set("q", search.value.trim());
    if (type.value) p.set("type", type.value);
    if (scope.value.trim()) p.set("scope", scope.value.trim());
    if (status.value !== "active") p.set("status", status.value);
    location.hash = `#/memories?${p}`;
  });
  const results = h("div", { id: "results" });
  const root = h("div", {}, form, results);
  const limit = Number(q.get("limit") || 50);
  const row = (m, extra) => h("li", { class: "card" },
    h("p", { class: "text" }, h("a", { href: `#/memory/${m.memory_id}` }, m.text)),
    h("div", { class: "meta" }, `${m.type} · ${m.scope} · asserted ${when(m.asserted_at)}`, m.status ? ` · ${m.status}` : "",
      extra || "", m.conflicts_with && m.conflicts_with.length ? " · in a pending conflict" : ""));
  if (search.value.trim()) {
    const body = { query: search.value.trim(), limit: 20 };
    if (type.value) body.type = type.value;
    if (scope.value.trim()) body.scope = scope.value.trim();
    const doc = await api("POST", "/v1/recall", body);
    if (doc.notice) results.append(h("p", { class: "status-pending", role: "note" }, doc.notice));
    results.append(h("p", { class: "muted" }, `${doc.results.length} result(s), ranked by ${doc.ranking}`));
    results.append(h("ul", { class: "plain" }, ...doc.results.map((m) => row(m, ` · score ${m.score.toFixed(2)}`))));
  } else {
    const p = new URLSearchParams({ status: status.value, limit: String(limit) });
    if (type.value) p.set("type", type.value);
    if (scope.value.trim()) p.set("scope", scope.value.trim());
    const doc = await api("GET", `/v1/memories?${p}`);
    results.append(h("p", { class: "muted" }, `${doc.memories.length} memories, newest first`));
    results.append(h("ul", { class: "plain" }, ...doc.memories.map((m) => row(m))));
    if (doc.memories.length === limit) {
      p.set("limit", String(limit + 50));
      if (search.value) p.set("q", search.value);
      results.append(h("a", { href: `#/memories?${p}` }, "Show more"));
    }
  }
  return root;
}

const KEY_SCORES = ["score", "agreements", "rest_jaccard", "cosine", "llm_confidence"];

function scoreLine(d) {
  return KEY_SCORES.filter((k) => d.scores && typeof d.scores[k] === "number")
    .map((k) => `${k} ${Number.isInteger(d.scores[k]) ? d.scores[k] : d.scores[k].toFixed(2)}`).join(" · ");
}

async function openByHand(a, b) {
  const note = prompt("Why can these two not both be true? (recorded as the conflict's reason)", "");
  if (note === null) return;
  try {
    const doc = await api("POST", "/v1/conflicts/open", { a, b, note: note.trim() || undefined });
    toast(`Opened conflict ${short(doc.conflict_id)}.`);
    location.hash = "#/conflicts?status=pending";
  } catch (e) { toast(`Not opened: ${e.message}`); }
}

async function memoryView(route) {
  const id = route.args[0];
  const [m, hist, why] = await Promise.all([
    api("GET", `/v1/memories/${id}`), api("GET", `/v1/memories/${id}/history`), api("GET", `/v1/memories/${id}/why`)]);
  const root = h("div", { class: "memory" });
  root.append(h("h2", {}, m.text),
    h("p", { class: "meta" }, `${m.type} · scope ${m.scope} · ${m.status} · v${m.version}`, m.fact_key ? ` · fact key ${m.fact_key}` : "",
      m.source ? ` · source ${m.source}` : "", " · ", h("span", { class: "id" }, m.memory_id)));
  root.append(h("h3", {}, "Lineage"));
  root.append(h("ol", { class: "timeline", "aria-label": "versions, newest first" }, ...hist.versions.map((v) =>
    h("li", { class: v.status === "active" ? "current" : "" },
      h("strong", {}, `v${v.version}`), ` · ${v.status} · `, h("span", { class: "muted" }, `${v.cause}`),
      h("div", {}, v.text),
      h("div", { class: "meta" }, `asserted ${when(v.asserted_at)}`, v.stale_since ? ` · ${v.status === "retired" ? "retired" : "stale"} since ${when(v.stale_since)}` : "",
        v.effective_at ? ` · true in the world from ${when(v.effective_at)}` : "",
        v.stale_since && v.effective_at ? ` · valid ${when(v.effective_at)} – ${when(v.stale_since)}` : ""),
      v.memory_id !== id ? h("div", { class: "meta" }, memLink(v.memory_id)) : null))));
  root.append(h("h3", {}, "Edges"));
  const edges = hist.edges.map((e) => h("li", {}, `${e.kind || e.edge_kind || "edge"}: `, memLink(e.from), " → ", memLink(e.to)));
  const conflicts = (m.conflicts || []).map((c) => h("li", {}, "pending conflict ", h("a", { href: "#/conflicts?status=pending" }, short(c))));
  root.append(edges.length || conflicts.length ? h("ul", {}, ...edges, ...conflicts) : h("p", { class: "muted" }, "No edges."));
  root.append(h("h3", {}, "Classifications"));
  if (!why.decisions.length) root.append(h("p", { class: "muted" }, "No classification involved this memory."));
  else {
    root.append(h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "classifications" }, h("table", {},
      h("thead", {}, h("tr", {}, ...["Other memory", "Relation", "Gate", "Outcome", "Scores", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...why.decisions.map((d) => {
        const other = d.incoming === m.memory_id ? d.candidate : d.incoming;
        const dropped = d.outcome === "near_miss" || d.outcome === "no_effect";
        return h("tr", {},
          h("td", {}, memLink(other)), h("td", {}, d.relation), h("td", {}, d.gate), h("td", {}, d.outcome),
          h("td", { class: "scores" }, scoreLine(d)),
          h("td", {}, h("a", { href: `#/why/${m.memory_id}/${other}` }, "why"),
            dropped && m.status === "active" ? [" ", h("button", { type: "button", onclick: () => openByHand(m.memory_id, other) }, "Open a conflict by hand")] : null));
      })))));
  }
  return root;
}

async function whyView(route) {
  const [a, b] = route.args;
  const [ma, mb, why] = await Promise.all([api("GET", `/v1/memories/${a}`), api("GET", `/v1/memories/${b}`),
    api("GET", `/v1/memories/${a}/why?other=${b}`)]);
  const root = h("div");
  root.append(h("div", { class: "sides" },
    h("div", { class: "side" }, h("div", { class: "label" }, "This memory"), h("p", { class: "text" }, diffText(ma.text, mb.text, "add")), h("div", { class: "meta" }, memLink(ma.memory_id))),
    h("div", { class: "side" }, h("div", { class: "label" }, "The other"), h("p", { class: "text" }, diffText(mb.text, ma.text, "del")), h("div", { class: "meta" }, memLink(mb.memory_id)))));
  if (!why.decisions.length) root.append(h("p", { class: "muted" }, "These two were never classified against each other."));
  for (const d of why.decisions) {
    const names = [...new Set([...Object.keys(d.scores || {}), ...Object.keys(d.thresholds || {})])];
    root.append(h("section", { class: "card decision", "aria-label": `classification at seq ${d.seq}` },
      h("h3", {}, `${d.relation} · gate ${d.gate} · outcome ${d.outcome}`),
      h("p", {}, d.reason),
      h("p", { class: "meta" }, `${d.method} · seq ${d.seq} · ${when(d.recorded_at)}`),
      d.model ? h("p", { class: "meta" }, `model ${d.model.model}: ${d.model.error ? `not used (${d.model.error})` : `${d.model.relation || "no verdict"}${d.model.reason ? `: ${d.model.reason}` : ""}`}`) : null,
      h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": `scores at seq ${d.seq}` }, h("table", {},
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Threshold"))),
        h("tbody", {}, ...names.map((n) => h("tr", {}, h("td", {}, n), h("td", {}, fmt(d.scores[n])), h("td", {}, fmt(d.thresholds[n])))))))));
  }
  const flagged = why.decisions.some((d) => d.outcome === "conflict_opened" || d.outcome === "conflict_settled");
  if (!flagged && ma.status === "active" && mb.status === "active") {
    root.append(h("div", { class: "actions" }, h("button", { type: "button", onclick: () => openByHand(a, b) }, "Open a conflict by hand")));
  }
  return root;
}

const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : "");

// ---- Near misses ----------------------------------------------------------------------------

async function nearMissesView(route) {
  const q = route.query;
  const kind = h("select", { id: "kind" }, ...[["all", "all dropped pairs"], ["across_kinds", "across kinds"], ["dropped", "below the band or another gate"]]
    .map(([v, t]) => h("option", { value: v, selected: v === (q.get("kind") || "all") }, t)));
  const scope = h("input", { id: "nm-scope", value: q.get("scope") || "", placeholder: "any scope" });
  const form = h("form", { class: "toolbar" }, h("label", { for: "kind" }, "Which", kind), h("label", { for: "nm-scope" }, "Scope", scope),
    h("button", { class: "primary", type: "submit" }, "Show"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const p = new URLSearchParams({ kind: kind.value });
    if (scope.value.trim()) p.set("scope", scope.value.trim());
    location.hash = `#/near-misses?${p}`;
  });
  const list = h("div", { id: "near-miss-list" });
  const older = h("button", { type: "button" }, "Older");
  const root = h("div", {}, h("p", { class: "muted" }, "Pairs the classifier examined and dropped: related but of different declared kinds, or kept apart by a gate. Open a conflict by hand where the gate was wrong."), form, list, older);
  let before = null;
  async function load() {
    const p = new URLSearchParams({ kind: kind.value, limit: "30" });
    if (scope.value.trim()) p.set("scope", scope.value.trim());
    if (before) p.set("before", String(before));
    const doc = await api("GET", `/v1/near-misses?${p}`);
    for (const n of doc.items) {
      const a = n.incoming, b = n.candidate;
      list.append(h("article", { class: "card near-miss", "aria-label": `pair at seq ${n.seq}` },
        h("div", { class: "sides" },
          a ? sideBox("Newer", a, b, "add") : h("div", { class: "side muted" }, "gone"),
          b ? sideBox("Older", b, a, "del") : h("div", { class: "side muted" }, "gone")),
        h("p", {}, `${n.relation} · gate ${n.gate} · ${n.outcome} · ${n.reason}`),
        h("p", { class: "meta" }, scoreLine(n), ` · seq ${n.seq}`),
        a && b ? h("div", { class: "actions" },
          h("a", { href: `#/why/${a.memory_id}/${b.memory_id}` }, "Why"),
          a.status === "active" && b.status === "active" ? h("button", { type: "button", onclick: () => openByHand(a.memory_id, b.memory_id) }, "Open a conflict by hand") : null) : null));
    }
    if (!list.children.length && !doc.next_before) list.append(h("p", { class: "muted" }, "No near misses."));
    before = doc.next_before;
    older.hidden = !before;
  }
  older.addEventListener("click", load);
  await load();
  return root;
}

// ---- Ledger ---------------------------------------------------------------------------------

async function ledgerView(route) {
  const q = route.query;
  const root = h("div");
  const verifyOut = h("p", { id: "verify-status", role: "status" }, "The hash chain has not been checked on this page.");
  const verifyButton = h("button", { type: "button", onclick: async () => {
    verifyButton.disabled = true;
    verifyOut.textContent = "Checking every event's hash and every view…";
    try {
      const v = await api("GET", "/v1/verify");
      verifyOut.replaceChildren(h("span", { class: v.ok ? "ok" : "bad" }, v.ok ? "verified" : "NOT verified"),
        ` · ${v.events} events · head seq ${v.head_seq} · head hash `, h("code", {}, (v.head_hash || "").slice(0, 16)),
        v.views_consistent ? " · views match a replay" : ` · views differ: ${v.inconsistent_views.join(", ")}`,
        v.problem ? ` · ${v.problem} (first bad seq ${v.first_bad_seq})` : "");
    } catch (e) { verifyOut.textContent = `verify failed: ${e.message}`; }
    verifyButton.disabled = false;
  } }, "Verify the chain");
  root.append(h("section", { "aria-labelledby": "verify-h" }, h("h2", { id: "verify-h" }, "Hash chain"), verifyOut, verifyButton));

  const charts = h("div", { class: "charts" }, h("p", { class: "muted" }, "Loading charts…"));
  root.append(h("section", { "aria-labelledby": "charts-h" }, h("h2", { id: "charts-h" }, "Over time"), charts));
  api("GET", "/v1/timeline").then((t) => charts.replaceChildren(...drawCharts(t))).catch((e) => charts.replaceChildren(h("p", { class: "bad" }, e.message)));

  const types = ["memory_observed", "pair_classified", "belief_added", "belief_versioned", "belief_merged", "belief_historical",
    "belief_retired", "conflict_opened", "conflict_resolved", "resolution_reverted", "belief_edited"];
  const type = h("select", { id: "ev-type" }, h("option", { value: "" }, "any type"),
    ...types.map((t) => h("option", { value: t, selected: t === q.get("type") }, t)));
  const actorIn = h("input", { id: "ev-actor", value: q.get("actor") || "", placeholder: "any actor" });
  const form = h("form", { class: "toolbar" }, h("label", { for: "ev-type" }, "Event type", type), h("label", { for: "ev-actor" }, "Actor contains", actorIn),
    h("button", { class: "primary", type: "submit" }, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (type.value) p.set("type", type.value);
    if (actorIn.value.trim()) p.set("actor", actorIn.value.trim());
    location.hash = `#/ledger?${p}`;
  });
  const body = h("tbody", { id: "events" });
  const older = h("button", { type: "button" }, "Older events");
  root.append(h("section", { "aria-labelledby": "events-h" }, h("h2", { id: "events-h" }, "Events, newest first"), form,
    h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "events" }, h("table", {},
      h("thead", {}, h("tr", {}, ...["Seq", "Recorded", "Type", "Principal", "Actor", "Details"].map((t) => h("th", { scope: "col" }, t)))), body)), older));
  let before = null;
  async function load() {
    const p = new URLSearchParams({ limit: "50" });
    if (type.value) p.set("type", type.value);
    if (actorIn.value.trim()) p.set("actor", actorIn.value.trim());
    if (before) p.set("before", String(before));
    const doc = await api("GET", `/v1/events?${p}`);
    for (const e of doc.items) {
      body.append(h("tr", {}, h("td", {}, String(e.seq)), h("td", {}, when(e.recorded_at)), h("td", {}, e.type),
        h("td", {}, e.principal || "owner"), h("td", {}, e.actor),
        h("td", {}, h("details", {}, h("summary", {}, "body"), h("pre", {}, JSON.stringify(e.body, null, 1))))));
    }
    before = doc.next_before;
    older.hidden = !before;
  }
  older.addEventListener("click", load);
  await load();
  return root;
}

function legend(names) {
  return h("div", { class: "legend" }, ...names.map((n, k) => h("span", {}, h("span", { class: `swatch series${k}` }), n)));
}

function drawCharts(t) {
  const labels = t.buckets.map((b) => b.start);
  const count = (b, k) => b.events[k] || 0;
  const fig = (caption, svg, names) => h("figure", {}, h("figcaption", {}, caption), svg, names ? legend(names) : null);
  const outcomes = Object.entries(t.save_outcomes);
  const scopes = Object.entries(t.conflicts_by_scope).map(([s, by]) => ({ name: s || "(none)", parts: [by.pending || 0, by.resolved || 0] }))
    .sort((a, b) => b.parts[0] + b.parts[1] - (a.parts[0] + a.parts[1]));
  return [
    fig(`Beliefs and pending conflicts (per ${t.bucket})`, lineChart("Beliefs and pending conflicts over time",
      labels, [{ name: "beliefs", values: t.buckets.map((b) => b.beliefs) }, { name: "pending conflicts", values: t.buckets.map((b) => b.pending_conflicts) }], t.bucket),
      ["beliefs", "pending conflicts"]),
    fig(`Conflicts opened and resolved (per ${t.bucket})`, lineChart("Conflicts opened and resolved over time", labels,
      [{ name: "opened", values: t.buckets.map((b) => count(b, "conflict_opened")) }, { name: "resolved", values: t.buckets.map((b) => count(b, "conflict_resolved")) }], t.bucket),
      ["opened", "resolved"]),
    fig("Outcomes of saves", barChart("Outcomes of saves: " + outcomes.map(([k, v]) => `${k} ${v}`).join(", "), outcomes.map(([k, v]) => ({ name: k, parts: [v] })))),
    fig("Conflicts by scope", barChart("Conflicts by scope: " + scopes.map((s) => `${s.name} ${s.parts[0]} pending, ${s.parts[1]} resolved`).join("; "), scopes),
      ["pending", "resolved"]),
  ];
}

export const views = {
  conflicts: { title: "Conflict queue", render: conflictsView },
  memories: { title: "Memories", render: memoriesView },
  memory: { title: "Memory", render: memoryView },
  why: { title: "Why", render: whyView },
  "near-misses": { title: "Near misses", render: nearMissesView },
  ledger: { title: "The ledger", render: ledgerView },
};
