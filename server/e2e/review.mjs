// The review page end to end in headless Chromium, against a real `memledger serve` on a seeded
// store (started by cli/tests/ui.rs, which passes MEMLEDGER_URL and MEMLEDGER_TOKEN). Each step
// waits for what the page shows, never for a time. axe-core runs in the page on every main view
// and fails the run on a serious or critical violation. Screenshots go to SCREENSHOT_DIR.

import { chromium } from "playwright-core";
import { readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const base = process.env.MEMLEDGER_URL;
const token = process.env.MEMLEDGER_TOKEN;
const shots = process.env.SCREENSHOT_DIR;
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
assert.ok(base && token, "MEMLEDGER_URL and MEMLEDGER_TOKEN are set");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

// Playwright gives launch() a fresh profile directory of its own (a fresh --user-data-dir).
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
});

const step = (name) => console.log(`step: ${name}`);

async function axe(page, view) {
  await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) console.log(`axe ${view}: ${v.impact} ${v.id}: ${v.help}\n  ${v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join("\n  ")}`);
  assert.equal(bad.length, 0, `axe finds no serious or critical violation on ${view}`);
}

async function shot(page, name) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: false });
}

// bypassCSP: axe-core goes into the page as a script of its own, which the page's policy forbids;
// the last context keeps the policy, and the page must run under it without an error.
async function run(scheme, bypassCSP = true) {
  const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1200, height: 900 }, reducedMotion: "reduce", bypassCSP });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("dialog", (d) => d.accept("16 and 17 cannot both be the staging version"));
  return { context, page, errors };
}

// ---- light: the whole scenario ----
const { context, page, errors } = await run("light");
step("open the page with the token in the fragment");
await page.goto(`${base}/#token=${token}`);
await page.waitForSelector("article.conflict");
assert.ok(!page.url().includes(token), "the token leaves the address bar");
assert.equal(await page.evaluate(() => sessionStorage.getItem("memledger-token")), token);

step("find the pending conflict about Postgres, with the differing words marked");
const pg = page.locator("article.conflict", { hasText: "Postgres 17" });
await pg.waitFor();
assert.equal(await pg.getAttribute("data-status"), "pending");
assert.ok((await pg.locator("mark.add").allTextContents()).includes("17"), "the new side's differing word is marked");
assert.ok((await pg.locator("mark.del").allTextContents()).includes("16"), "the existing side's differing word is marked");
await axe(page, "conflict queue");
await shot(page, "conflicts-light");
const conflictId = await pg.getAttribute("data-id");

step("the existing side's lineage before deciding");
const existingHref = await pg.locator(".side").nth(1).locator("a", { hasText: "history of" }).getAttribute("href");
await page.goto(`${base}/${existingHref}`);
await page.waitForSelector("ol.timeline li");
const before = await page.locator("ol.timeline li").count();

step("keep the new side with the keyboard (select with j/k, decide with n)");
await page.goto(`${base}/#/conflicts`);
await page.waitForSelector(`article.conflict[data-id="${conflictId}"]`);
const cards = await page.locator("article.conflict").evaluateAll((els) => els.map((e) => e.dataset.id));
const index = cards.indexOf(conflictId);
await page.locator("body").click({ position: { x: 5, y: 5 } });
for (let i = 0; i < index; i++) await page.keyboard.press("j");
await page.keyboard.press("k");
if (index > 0) await page.keyboard.press("j");
await page.waitForSelector(`article.conflict.selected[data-id="${conflictId}"]`);
await page.keyboard.press("n");
await page.waitForSelector(`article.conflict[data-id="${conflictId}"][data-status="resolved"]`);
assert.match(await page.locator(`article.conflict[data-id="${conflictId}"]`).innerText(), /resolved keep_new by person:ui:/);

step("the lineage gained a version");
await page.goto(`${base}/${existingHref}`);
await page.waitForFunction((n) => document.querySelectorAll("ol.timeline li").length === n + 1, before);
assert.match(await page.locator("ol.timeline li").first().innerText(), /Postgres 17/);

step("revert with u: pending again");
await page.goto(`${base}/#/conflicts`);
await page.waitForSelector(`article.conflict[data-id="${conflictId}"][data-status="resolved"]`);
// `u` reverts the last decision made on this page; this page was loaded anew, so use the button.
await page.locator(`article.conflict[data-id="${conflictId}"] button`, { hasText: "Revert" }).click();
await page.waitForSelector(`article.conflict[data-id="${conflictId}"][data-status="pending"]`);
await page.goto(`${base}/${existingHref}`);
await page.waitForFunction((n) => document.querySelectorAll("ol.timeline li").length === n, before);

step("decide and revert in one visit with the keys n and u");
await page.goto(`${base}/#/conflicts?status=pending`);
await page.waitForSelector(`article.conflict[data-id="${conflictId}"]`);
await page.locator(`article.conflict[data-id="${conflictId}"] h3`).click();
await page.keyboard.press("e");
await page.waitForSelector(`#toast:has-text("keep existing")`);
await page.waitForFunction((id) => !document.querySelector(`article.conflict[data-id="${id}"]`), conflictId);
await page.keyboard.press("u");
await page.waitForSelector(`article.conflict[data-id="${conflictId}"][data-status="pending"]`);

step("merge another conflict with edited text");
await page.goto(`${base}/#/conflicts?status=pending`);
const deploy = page.locator("article.conflict", { hasText: "deploy" });
await deploy.waitFor();
const deployId = await deploy.getAttribute("data-id");
await deploy.locator("button", { hasText: "Merge…" }).click();
const area = deploy.locator("textarea");
await area.waitFor();
assert.match(await area.inputValue(), /deploy/);
await area.fill("the deploy job runs every 20 minutes since the March change");
await deploy.locator("button", { hasText: "Save merge" }).click();
await page.waitForFunction((id) => !document.querySelector(`article.conflict[data-id="${id}"]`), deployId);
await page.goto(`${base}/#/conflicts?status=resolved`);
const merged = page.locator(`article.conflict[data-id="${deployId}"]`);
await merged.waitFor();
assert.match(await merged.innerText(), /resolved merge/);

step("search and open a memory's history");
await page.goto(`${base}/#/memories`);
await page.fill("#q", "deploy job minutes");
await page.click("form[role=search] button[type=submit]");
const hit = page.locator("#results a", { hasText: "every 20 minutes since the March change" }).first();
await hit.waitFor();
await axe(page, "memories");
await hit.click();
await page.waitForSelector("ol.timeline li");
assert.match(await page.locator("ol.timeline").innerText(), /merge/);
await axe(page, "memory timeline");
await shot(page, "memory-light");

step("near misses: open why for a dropped pair");
await page.goto(`${base}/#/near-misses`);
const nm = page.locator("article.near-miss", { hasText: "pnpm" }).first();
await nm.waitFor();
await axe(page, "near misses");
await nm.locator("a", { hasText: "Why" }).click();
await page.waitForSelector("section.decision");
const decision = await page.locator("section.decision").first().innerText();
assert.match(decision, /gate \w+/);
assert.match(decision, /near_miss|no_effect/);
assert.ok(await page.locator("section.decision table tbody tr").count() > 0, "the scores and thresholds are listed");
await axe(page, "why");

step("open a conflict by hand from the near miss");
await page.locator("button", { hasText: "Open a conflict by hand" }).click();
await page.waitForURL(/#\/conflicts/);
const byHand = page.locator("article.conflict", { hasText: "pnpm" }).first();
await byHand.waitFor();
assert.match(await byHand.innerText(), /by_hand/);

step("the ledger: verify, events filtered by actor, charts");
await page.goto(`${base}/#/ledger`);
await page.click("button:has-text('Verify the chain')");
await page.waitForSelector("#verify-status .ok");
await page.waitForSelector("svg.chart");
await page.fill("#ev-actor", "ui:");
await page.click("section[aria-labelledby=events-h] button[type=submit]");
await page.waitForFunction(() => document.querySelectorAll("#events tr").length > 0 &&
  [...document.querySelectorAll("#events tr td:nth-child(5)")].every((td) => td.textContent.startsWith("ui:")));
// Beside every event, the principal that appended it: the store's owner for all of these.
assert.ok((await page.$$eval("#events tr td:nth-child(4)", (tds) => tds.map((td) => td.textContent))).every((p) => p === "owner"));
await axe(page, "ledger");
await page.fill("#ev-actor", "");
await page.click("section[aria-labelledby=events-h] button[type=submit]");
await page.waitForFunction(() => [...document.querySelectorAll("#events tr td:nth-child(5)")].some((td) => !td.textContent.startsWith("ui:")));
await shot(page, "ledger-light");
assert.deepEqual(errors, [], "the page logged no error");
await context.close();

// ---- dark, and a phone's width ----
step("dark mode and a phone's width");
const dark = await run("dark");
await dark.page.setViewportSize({ width: 390, height: 844 });
await dark.page.goto(`${base}/#token=${token}`);
await dark.page.waitForSelector("article.conflict");
const width = await dark.page.evaluate(() => document.documentElement.scrollWidth);
assert.ok(width <= 390, `nothing is wider than the phone (${width}px)`);
const bg = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
assert.equal(bg, "rgb(13, 17, 23)", "the dark scheme is used");
await axe(dark.page, "conflict queue, dark, phone");
await shot(dark.page, "conflicts-dark-phone");
await dark.page.goto(`${base}/#/ledger`);
await dark.page.waitForSelector("svg.chart");
await axe(dark.page, "ledger, dark, phone");
assert.deepEqual(dark.errors, [], "the page logged no error");
await dark.context.close();

step("without the token the page asks for it; under its own Content-Security-Policy");
const bare = await run("light", false);
await bare.page.goto(`${base}/`);
await bare.page.waitForSelector("input#token");
await bare.page.fill("#token", token);
await bare.page.click("button:has-text('Continue')");
await bare.page.waitForSelector("article.conflict");
await bare.page.goto(`${base}/#/ledger`);
await bare.page.waitForSelector("svg.chart");
await bare.page.waitForSelector("#events tr");
assert.deepEqual(bare.errors, [], "the page runs under its policy without an error");
await bare.context.close();

step("as a principal: the page says who it is, and shows only what it may read");
const reader = process.env.MEMLEDGER_PRINCIPAL_TOKEN;
assert.ok(reader, "MEMLEDGER_PRINCIPAL_TOKEN is set");
const as = await run("light");
await as.page.goto(`${base}/`);
await as.page.waitForSelector("input#token");
await as.page.fill("#token", reader);
await as.page.click("button:has-text('Continue')");
await as.page.waitForSelector("#conflict-list p.muted");
assert.match(await as.page.innerText("#conflict-list"), /No conflicts here/, "its scope holds no conflict");
await as.page.reload();
await as.page.waitForFunction(() => document.getElementById("who").textContent.includes("reader (agent)"));
await as.page.goto(`${base}/#/ledger`);
await as.page.waitForSelector("#events tr");
const seen = await as.page.$eval("#events", (el) => el.textContent);
assert.ok(!/Postgres/.test(seen) && /standup/.test(seen), `only the events of the scope it may read: ${seen}`);
await axe(as.page, "ledger, as a principal");
assert.deepEqual(as.errors, [], "the page logged no error");
await as.context.close();

await browser.close();
console.log("review page: every step passed");
