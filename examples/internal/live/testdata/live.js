"use strict";
// The live view of a crawl: one EventSource, one DOM update per message (the
// hub sends at most ten a second, whatever the crawl's rate).
(function () {
  const $ = (id) => document.getElementById(id);
  const body = document.body.dataset;
  let messages = 0, items = 0, skipped = 0, lastSeq = -1, lastItem = 0;
  body.inOrder = "true";
  body.errors = "0";
  const source = new EventSource("/events");
  source.addEventListener("snapshot", (e) => {
    const m = JSON.parse(e.data);
    messages++;
    if (m.seq < lastSeq || m.first_item !== lastItem + m.skipped + 1) {
      body.inOrder = "false";
    }
    lastSeq = m.seq;
    lastItem = m.first_item + m.items.length - 1;
    items += m.items.length;
    skipped += m.skipped;
    $("pages").textContent = String(m.counters.pages ?? 0);
    $("requests").textContent = String(m.counters.requests ?? 0);
    $("state").textContent = m.state.politeness ?? "–";
    $("messages").textContent = String(messages);
    $("items").textContent = String(items);
    $("skipped").textContent = String(skipped);
    const list = $("latest");
    for (const it of m.items.slice(-10)) {
      const li = document.createElement("li");
      li.textContent = it.status + " " + it.url;
      list.prepend(li);
    }
    while (list.children.length > 10) {
      list.lastElementChild.remove();
    }
  });
  source.addEventListener("error", () => {
    body.errors = String(Number(body.errors) + 1);
  });
})();
