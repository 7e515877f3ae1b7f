"use strict";
// Crawl Cove app: the live view of a running crawl. One EventSource; the server's hub sends at most
// ten snapshots a second whatever the crawl's rate, and each one is one DOM update here. Crawled text
// (URLs, titles) is only ever set with textContent.
(function () {
  const view = document.getElementById("live");
  if (!view || view.dataset.running !== "true") {
    return;
  }
  const $ = (id) => document.getElementById(id);
  const run = view.dataset.run;
  const latestMax = 25;
  let messages = 0;
  const source = new EventSource("/events");
  source.addEventListener("snapshot", (e) => {
    const m = JSON.parse(e.data);
    const s = m.state || {};
    if (s.run !== run) {
      return; // the hub still holds an earlier run's state
    }
    messages++;
    view.dataset.messages = String(messages);
    for (const id of ["pages", "queued", "requests", "errors", "blocked", "inflight"]) {
      if (s[id] !== undefined) {
        $(id).textContent = s[id];
      }
    }
    if (s.crawl && s.crawl !== "0") {
      $("crawl-id").textContent = s.crawl;
    }
    $("limits").textContent = s.limits || "";
    $("slowed").textContent = s.slowed || "";
    $("robots").textContent = s.robots || "";
    const list = $("latest");
    const items = (m.items || []).filter((it) => String(it.run) === run).slice(-latestMax);
    const frag = document.createDocumentFragment();
    for (const it of items) {
      const li = document.createElement("li");
      const st = document.createElement("span");
      st.className = "st";
      st.textContent = it.blocked ? "blocked" : (it.status ? String(it.status) : (it.error || "–"));
      const u = document.createElement("span");
      u.className = "url";
      u.textContent = it.url;
      const t = document.createElement("span");
      t.className = "title";
      t.textContent = it.title || "";
      li.append(st, " ", u, " ", t);
      frag.prepend(li);
    }
    list.prepend(frag);
    while (list.children.length > latestMax) {
      list.lastElementChild.remove();
    }
    if (s.phase === "done") {
      source.close();
      $("phase").textContent = s.outcome || "done";
      window.location.reload(); // the server renders the end: summary, links, resume
    }
  });
})();
