// How fast the review page paints, in headless Chromium, against a running `memledger serve
// --http`: first contentful paint (the page's own HTML and CSS), and the time until the conflict
// queue's first page is on screen (its API call answered and drawn), medians of RUNS fresh
// browser contexts. The floor, measured in the same run: the first paint of the server's
// `/openapi.json` (a static document over the same loopback, drawn as plain text).
//
//   node bench/ui_paint.mjs http://127.0.0.1:PORT TOKEN [RUNS]
//
// Needs the packages of server/e2e (npm ci there) and /usr/bin/chromium.

import { createRequire } from "node:module";

const require = createRequire(new URL("../server/e2e/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const [base, token, runsArg] = process.argv.slice(2);
if (!base || !token) {
  console.error("usage: node bench/ui_paint.mjs http://127.0.0.1:PORT TOKEN [RUNS]");
  process.exit(2);
}
const runs = Number(runsArg || 9);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
});

async function measure(url, ready) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  if (ready) await page.waitForSelector(ready);
  await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0);
  const t = await page.evaluate((readySel) => {
    const paint = performance.getEntriesByName("first-contentful-paint")[0];
    const nav = performance.getEntriesByType("navigation")[0];
    return { fcp: paint ? paint.startTime : NaN, dcl: nav ? nav.domContentLoadedEventEnd : NaN, ready: readySel ? performance.now() : NaN };
  }, ready);
  await context.close();
  return t;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const floor = [], page = [];
// One warm-up of each (the browser's own start-up), then alternated runs.
const floorUrl = `${base}/openapi.json`;
await measure(floorUrl);
await measure(`${base}/#token=${token}`, "article.conflict, #conflict-list p");
for (let i = 0; i < runs; i++) {
  floor.push(await measure(floorUrl));
  page.push(await measure(`${base}/#token=${token}`, "article.conflict, #conflict-list p"));
}
const ms = (x) => `${x.toFixed(1)} ms`;
console.log(`runs: ${runs} (medians)`);
console.log(`floor: first paint of /openapi.json          ${ms(median(floor.map((t) => t.fcp)))}`);
console.log(`page: first contentful paint                 ${ms(median(page.map((t) => t.fcp)))}`);
console.log(`page: DOMContentLoaded (HTML and modules)    ${ms(median(page.map((t) => t.dcl)))}`);
console.log(`page: the conflict queue's first page drawn  ${ms(median(page.map((t) => t.ready)))}`);
await browser.close();
