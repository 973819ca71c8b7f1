// Drives `coal serve`'s page in Debian's Chromium: ask a question, see an answer with
// citations, follow a citation to its article, run a SPARQL query. Screenshots go to
// the folder given (test artifacts).
//
// Usage: node page.mjs http://127.0.0.1:PORT QUESTION OUT_DIR
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [base, question, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const fail = (msg) => {
  console.error("FAIL " + msg);
  process.exitCode = 1;
};
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Nothing may come from anywhere but the server itself.
  const foreign = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(base)) foreign.push(r.url());
  });
  await page.goto(base + "/");
  await page.waitForSelector("#build:not(:empty)");
  console.log("page:", await page.textContent("#build"));

  await page.fill("#question", question);
  await page.click("#ask-button");
  await page.waitForSelector("#citations li a");
  const cited = await page.$$eval("#citations li a", (as) => as.map((a) => a.textContent));
  const meta = await page.textContent("#answer-meta");
  console.log("answer:", meta, "|", cited.length, "citations:", cited.join(" "));
  if (!/tier [1-4]/.test(meta)) fail("no tier in " + meta);
  await page.screenshot({ path: join(out, "1-answer.png"), fullPage: true });

  const first = cited[0];
  await page.click("#citations li a >> nth=0");
  await page.waitForSelector("#view-article:not([hidden]) #article-title:not(:empty)");
  const title = await page.textContent("#article-title");
  const crumbs = await page.$$eval("#hierarchy .crumb", (as) => as.map((a) => a.textContent));
  console.log("article:", title, "| hierarchy:", crumbs.join(" › "));
  if (!first.includes(title.replace(/（.*/, "").split("》")[1] || "?")) fail(`clicked ${first}, got ${title}`);
  if (crumbs.length < 1) fail("no hierarchy above the article");
  await page.screenshot({ path: join(out, "2-article.png"), fullPage: true });

  // Up the hierarchy: the law version, and what it contains.
  await page.click("#hierarchy .crumb >> nth=0");
  await page.waitForSelector("#view-node:not([hidden]) #node-children li");
  const children = await page.$$eval("#node-children li", (lis) => lis.map((l) => l.textContent));
  console.log("node:", await page.textContent("#node-title"), "|", children.length, "children:", children.join(" "));
  await page.screenshot({ path: join(out, "3-node.png"), fullPage: true });

  // The changes between the two versions of 示范保障法.
  await page.evaluate(() => (location.hash = "#diff=" + encodeURIComponent("示范保障法")));
  await page.waitForSelector("#view-diff:not([hidden]) #diff-changes li");
  console.log("diff:", await page.textContent("#diff-title"), "|", await page.textContent("#diff-counts"));

  await page.click("a[data-view=sparql]");
  await page.waitForSelector("#view-sparql:not([hidden])");
  await page.fill(
    "#sparql",
    "SELECT ?title WHERE { ?v a coal:LawVersion ; coal:title ?title } ORDER BY ?title"
  );
  await page.click("#run-sparql");
  await page.waitForSelector("#sparql-table tbody tr");
  const rows = await page.$$eval("#sparql-table tbody tr", (trs) => trs.map((t) => t.textContent));
  console.log("sparql:", rows.length, "rows:", rows.join(" | "));
  await page.screenshot({ path: join(out, "4-sparql.png"), fullPage: true });

  if (errors.length) fail("page errors: " + errors.join("; "));
  if (foreign.length) fail("requests off the server: " + foreign.join(" "));
} finally {
  await browser.close();
}
