// coal's page: ask, walk an article, run SPARQL. Plain DOM, no libraries.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function articleLink(iri, text) {
  return el("a", { href: "#article=" + encodeURIComponent(iri), class: "article-link" }, text);
}

function showError(message) {
  const e = $("error");
  e.textContent = message;
  e.hidden = !message;
}

async function getJson(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  if (!r.ok) throw new Error(`${r.status}: ${text}`);
  return JSON.parse(text);
}

function show(view) {
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
}

async function ask(event) {
  event?.preventDefault();
  const q = $("question").value.trim();
  if (!q) return;
  showError("");
  $("ask-button").disabled = true;
  try {
    const params = new URLSearchParams({ q, explain: "true" });
    if ($("tier").value) params.set("tier", $("tier").value);
    const a = await getJson("/api/ask?" + params);
    $("answer").hidden = false;
    $("answer-meta").textContent =
      `tier ${a.tier} · ${a.kind}` + (a.generated_by ? ` · written by ${a.generated_by}` : " · extractive");
    $("answer-text").textContent = a.answer;
    const list = $("citations");
    list.replaceChildren(
      ...a.citations.map((c) =>
        el("li", {}, articleLink(c.iri, `《${c.law_title}》${c.label}`), ` (${c.version_date})`)
      )
    );
    const t = a.trace || {};
    const cx = t.complexity;
    $("trace").textContent = JSON.stringify(
      { tier: a.tier, complexity: cx, links: t.links, warnings: a.warnings },
      null,
      2
    );
  } catch (e) {
    showError(e.message);
  } finally {
    $("ask-button").disabled = false;
  }
}

async function openArticle(iri) {
  show("article");
  showError("");
  try {
    const d = await getJson("/api/article?" + new URLSearchParams({ iri }));
    const a = d.article;
    $("hierarchy").replaceChildren(
      ...d.hierarchy.map((h) =>
        el("a", { href: "#node=" + encodeURIComponent(h.iri), title: h.iri, class: "crumb" }, [h.label, h.heading].filter(Boolean).join(" "))
      )
    );
    $("article-title").textContent = `《${a.law_title}》${a.label}（${a.version_date}）`;
    $("article-text").replaceChildren(...a.text.split("\n").map((p) => el("p", {}, p)));
    // 款 and 项 below the article, as the graph holds them.
    $("parts").replaceChildren(
      ...d.parts.map((p) => el("li", { title: p.iri }, `${p.kind === "Item" ? "项" : "款"} ${p.iri.split("/").pop()}: ${p.text}`))
    );
    const items = (rows, make) => rows.map((r) => el("li", {}, make(r)));
    $("cites").replaceChildren(...items(d.cites, (r) => articleLink(r.article, r.label)));
    $("cited-by").replaceChildren(...items(d.cited_by, (r) => articleLink(r.article, r.label)));
    $("concepts").replaceChildren(...items(d.concepts, (r) => `${r.label} (${r.how})`));
    $("versions").replaceChildren(...items(d.versions, (r) => articleLink(r.article, r.date)));
    $("law-diff").href = "#diff=" + encodeURIComponent(a.law_title);
  } catch (e) {
    showError(e.message);
  }
}

async function openNode(iri) {
  show("node");
  showError("");
  try {
    const n = await getJson("/api/node?" + new URLSearchParams({ iri }));
    $("node-title").textContent = [n.label, n.heading].filter(Boolean).join(" ") || n.kind;
    $("node-children").replaceChildren(
      ...n.children.map((c) => {
        const text = [c.label, c.heading].filter(Boolean).join(" ") || c.kind;
        const link =
          c.kind === "Article"
            ? articleLink(c.iri, text)
            : el("a", { href: "#node=" + encodeURIComponent(c.iri), class: "node-link" }, text);
        return el("li", {}, link);
      })
    );
  } catch (e) {
    showError(e.message);
  }
}

async function openDiff(law) {
  show("diff");
  showError("");
  try {
    const d = await getJson("/api/diff/" + encodeURIComponent(law));
    $("diff-title").textContent = `${d.to.title}: ${d.from.version_date} → ${d.to.version_date}`;
    $("diff-counts").textContent = d.counts.map(([k, n]) => `${k} ${n}`).join(", ");
    $("diff-changes").replaceChildren(
      ...d.changes
        .filter((c) => c.kind !== "unchanged")
        .map((c) => {
          const side = c.to || c.from;
          const label = [c.from?.label, c.to?.label].filter(Boolean).join(" → ");
          return el("li", { class: "change" }, `${c.kind} ${label}: `, side ? side.text : "");
        })
    );
  } catch (e) {
    showError(e.message);
  }
}

function cell(term) {
  if (!term) return "";
  if (term.type === "uri") {
    const a = el("a", { href: "#article=" + encodeURIComponent(term.value) }, term.value);
    return a;
  }
  return term.value;
}

async function runSparql(event) {
  event?.preventDefault();
  showError("");
  $("run-sparql").disabled = true;
  try {
    const started = performance.now();
    const r = await fetch("/query", {
      method: "POST",
      headers: {
        "Content-Type": "application/sparql-query",
        Accept: "application/sparql-results+json, text/turtle;q=0.9",
      },
      body: $("sparql").value,
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${r.status}: ${text}`);
    const ms = Math.round(performance.now() - started);
    const out = $("sparql-results");
    const cut = r.headers.get("coal-results-truncated");
    if ((r.headers.get("content-type") || "").startsWith("text/turtle")) {
      out.replaceChildren(el("pre", {}, text));
      $("sparql-meta").textContent = `graph · ${ms} ms`;
      return;
    }
    const j = JSON.parse(text);
    if ("boolean" in j) {
      out.replaceChildren(el("p", { id: "sparql-boolean" }, String(j.boolean)));
      $("sparql-meta").textContent = `${ms} ms`;
      return;
    }
    const vars = j.head.vars;
    const rows = j.results.bindings;
    out.replaceChildren(
      el(
        "table",
        { id: "sparql-table" },
        el("thead", {}, el("tr", {}, ...vars.map((v) => el("th", {}, "?" + v)))),
        el("tbody", {}, ...rows.map((b) => el("tr", {}, ...vars.map((v) => el("td", {}, cell(b[v]))))))
      )
    );
    $("sparql-meta").textContent =
      `${rows.length} row(s) · ${ms} ms` + (cut ? ` · cut at the server's limit of ${cut}` : "");
  } catch (e) {
    showError(e.message);
  } finally {
    $("run-sparql").disabled = false;
  }
}

function route() {
  const h = decodeURIComponent(location.hash.slice(1));
  if (h.startsWith("article=")) return openArticle(h.slice("article=".length));
  if (h.startsWith("node=")) return openNode(h.slice("node=".length));
  if (h.startsWith("diff=")) return openDiff(h.slice("diff=".length));
  show(h === "sparql" ? "sparql" : "ask");
}

function init() {
  $("ask-form").addEventListener("submit", ask);
  $("sparql-form").addEventListener("submit", runSparql);
  const examples = JSON.parse($("examples-data").textContent);
  const select = $("examples");
  for (const ex of examples) select.append(el("option", { value: ex.query }, ex.name));
  select.addEventListener("change", () => {
    if (select.value) $("sparql").value = select.value;
  });
  window.addEventListener("hashchange", route);
  getJson("/healthz")
    .then((h) => ($("build").textContent = "build " + h.build))
    .catch(() => {});
  route();
}

init();
