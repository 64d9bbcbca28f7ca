// The review page's entry: the bearer token, the router and the keyboard. The token (the
// store's own, or a principal's) comes in the URL's fragment (`memledger ui` opens `/#token=…`),
// which the browser never sends to a server, or is typed in; it is kept in sessionStorage (this
// tab only) and taken out of the address bar. The page shows what that principal may read.

import { api, h, setToken, hasToken, toast, views, state } from "/ui/views.js";

function takeTokenFromFragment() {
  const m = location.hash.match(/(?:^#|&)token=([A-Za-z0-9_-]+)/);
  if (!m) return;
  setToken(m[1]);
  history.replaceState(null, "", location.pathname + "#/conflicts");
}

function parseRoute() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { name: parts[0] || "conflicts", args: parts.slice(1), query: new URLSearchParams(query || "") };
}

function loginForm(message) {
  const input = h("input", { id: "token", type: "password", autocomplete: "off", required: true });
  const form = h("form", { class: "card" },
    h("p", {}, message || "This page needs a token: the store's, or a principal's."),
    h("div", { class: "field" }, h("label", { for: "token" }, "Bearer token"), input),
    h("p", { class: "muted" }, "Run ", h("code", {}, "memledger ui"), " to open the page with one, paste the output of ",
      h("code", {}, "memledger serve --print-token"), " (the store's owner), or a token ",
      h("code", {}, "memledger principals add"), " printed (what that principal may read)."),
    h("button", { class: "primary", type: "submit" }, "Continue"));
  form.addEventListener("submit", (e) => { e.preventDefault(); setToken(input.value.trim()); route(); });
  return form;
}

let routing = 0;
async function route() {
  const r = parseRoute();
  const view = views[r.name] || views.conflicts;
  for (const a of document.querySelectorAll(".top nav a")) {
    const current = a.dataset.view === r.name || (r.name === "memory" && a.dataset.view === "memories") ||
      (r.name === "why" && a.dataset.view === "near-misses");
    if (current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  const target = document.getElementById("view");
  document.getElementById("title").textContent = view.title;
  document.title = `${view.title} · memledger`;
  if (!hasToken()) { target.replaceChildren(loginForm()); return; }
  const mine = ++routing;
  state.keys = null;
  try {
    const node = await view.render(r);
    if (mine === routing) target.replaceChildren(node);
  } catch (e) {
    if (mine !== routing) return;
    if (e.status === 401) { setToken(null); target.replaceChildren(loginForm("The token was refused (wrong, rotated or revoked): give another.")); return; }
    target.replaceChildren(h("p", { class: "bad", role: "alert" }, `Could not load: ${e.message}`));
  }
}

// j/k/n/e/b/m/u act on the current view; never while typing into a field.
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
  if (state.keys && state.keys(e.key)) e.preventDefault();
});

window.addEventListener("hashchange", route);
takeTokenFromFragment();
if (hasToken()) {
  Promise.all([api("GET", "/v1/whoami"), api("GET", "/v1/status")]).then(([me, s]) => {
    state.actor = me.owner ? s.ui_actor : `ui:${me.principal}`;
    const who = me.owner ? "the store's owner" : `${me.principal} (${me.kind})`;
    document.getElementById("who").textContent = `${who}, acting as ${state.actor} · head seq ${s.head_seq}`;
  }).catch(() => {});
}
route();
