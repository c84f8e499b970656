// One session: the window gauge with its trigger line, the context as the model sees it (each summary and recall
// block marked, expandable to its originals from the archive, verified), the chain of summary records, search
// over the archive, recent events, and the two actions: "Summarize now" (the manual trigger) and clearing.
//
// A compaction's figures come from the server as they are (figures.js): "Summarize now"'s note, the events, the
// records, the banner, the gauge and the context's header all show the pair of the one event.

import { apiJson, sessionPath } from "./api.js";
import { summarization } from "./banner.js";
import { h, int, messageText, shortId, sparkles, summarizedBadge, timeAgo } from "./dom.js";
import { compactionFigures, displayMessage, modelCoverage, recallNote } from "./figures.js";
import { renderGauge } from "./gauge.js";
import { blockKind, blockLabel, messageTag, plural, recordLabel } from "./labels.js";
import { emit, state } from "./state.js";

export function mountSession(root) {
  let current = null;
  let view = null;
  let notice = "";
  const open = new Set(); // keys of the <details> the reader opened: kept open across live refreshes
  const cache = new Map(); // originals already fetched, by what they were fetched for
  let applied = null; // the last event drawn: a later change of the badges alone must not draw it again
  summarization.addEventListener("change", () => {
    view?.renderTitle();
    const event = summarization.contextSummarized;
    if (event === applied) return;
    applied = event;
    if (event && event.sessionId === current) view?.applyEvent(event); // the gauge moves with the banner
  });

  async function show(id) {
    current = id;
    open.clear();
    cache.clear();
    if (id === null) {
      view = null;
      root.replaceChildren(emptyView(notice));
      notice = "";
      return;
    }
    view = skeleton(id);
    root.replaceChildren(view.el);
    await refresh();
  }

  // One refresh at a time, and none while the session is being deleted: a refresh in flight when the DELETE
  // lands would ask for a session that is gone.
  let inFlight = Promise.resolve();
  let deleting = null;

  function refresh() {
    inFlight = inFlight.then(load, load);
    return inFlight;
  }

  async function load() {
    const id = current;
    if (id === null || view === null || id === deleting) return;
    let detail;
    let context;
    try {
      [detail, context] = await Promise.all([
        apiJson(sessionPath(id)),
        apiJson(`${sessionPath(id)}/context`).catch((e) => (e.status === 404 ? null : Promise.reject(e))),
      ]);
    } catch (e) {
      if (id !== current) return;
      view.status(e.status === 404 ? "This session does not exist (any more)." : `Could not load: ${e.message}`, true);
      return;
    }
    if (id !== current) return;
    if (detail.summarized) summarization.markSessionSummarized(id);
    // A live refresh redraws the lists: a keyboard user's focus on a disclosure comes back to the same one.
    const focusedKey = root.contains(document.activeElement)
      ? document.activeElement.closest("details[data-key]")?.dataset.key
      : undefined;
    view.render(detail, context);
    if (focusedKey !== undefined) {
      root.querySelector(`details[data-key="${CSS.escape(focusedKey)}"] > summary`)?.focus();
    }
  }

  // -- the parts ------------------------------------------------------------------------------------------------

  function skeleton(id) {
    const path = sessionPath(id);
    const title = h("h2", { id: "session-title", tabindex: "-1" });
    const sub = h("p", { class: "session-sub muted" });
    const status = h("p", { class: "action-status", "aria-live": "polite" });
    const setStatus = (text, isError = false) => {
      status.textContent = text;
      status.classList.toggle("error", isError);
    };

    const summarize = h("button", { type: "button", class: "button primary", id: "summarize-now" }, sparkles(), "Summarize now");
    summarize.addEventListener("click", async () => {
      summarize.disabled = true;
      setStatus("Summarizing…");
      try {
        const r = await apiJson(`${path}/compact`, { method: "POST" });
        if (r.status === "compacted" && r.event) {
          const recall = recallNote(r.event);
          setStatus(`Compacted: ${compactionFigures(r.event)}${recall ? `; ${recall}` : ""}.`);
          applyEvent(r.event);
        } else if (r.status === "compacted") setStatus(`Compacted: ${int(r.tokens_before)} → ${int(r.tokens_after)} tokens.`);
        else if (r.status === "unchanged") setStatus(`Nothing to compact now (${int(r.tokens_after)} tokens in the window).`);
        else setStatus("Requested: the session's next request will be compacted (it is served by another process).");
        await refresh();
      } catch (e) {
        setStatus(`Could not summarize: ${e.message}`, true);
      } finally {
        summarize.disabled = false;
      }
    });

    const confirmYes = h("button", { type: "button", class: "button danger", id: "clear-confirm" }, "Delete session");
    const confirmNo = h("button", { type: "button", class: "button" }, "Cancel");
    const confirm = h(
      "span",
      { class: "confirm", id: "clear-group", role: "group", "aria-label": "Confirm clearing the session", hidden: true },
      h("span", { text: "Delete its archive, summary records and state?" }),
      confirmYes,
      confirmNo,
    );
    const clear = h(
      "button",
      { type: "button", class: "button danger-outline", id: "clear-session", "aria-expanded": "false", "aria-controls": "clear-group" },
      "Clear session…",
    );
    const closeConfirm = () => {
      confirm.hidden = true;
      clear.setAttribute("aria-expanded", "false");
      clear.focus();
    };
    clear.addEventListener("click", () => {
      confirm.hidden = false;
      clear.setAttribute("aria-expanded", "true");
      confirmYes.focus();
    });
    confirmNo.addEventListener("click", closeConfirm);
    confirm.addEventListener("keydown", (e) => e.key === "Escape" && closeConfirm());
    confirmYes.addEventListener("click", async () => {
      confirmYes.disabled = true;
      try {
        deleting = id;
        await inFlight;
        await apiJson(path, { method: "DELETE" });
        state.openSession = null; // before anything can refresh it: it is gone
        summarization.clearSession(id);
        notice = `Session “${title.dataset.label ?? id}” was cleared.`;
        emit("cleared", { sessionId: id });
        location.hash = "#/";
      } catch (e) {
        setStatus(`Could not clear: ${e.message}`, true);
        confirmYes.disabled = false;
      } finally {
        deleting = null;
      }
    });

    const gauge = h("div", { class: "gauge-slot" });
    const contextNote = h("p", { class: "muted" });
    const contextList = h("ol", { class: "context", "aria-label": "Messages the model sees" });
    const records = h("ol", { class: "records" });
    const recordsNote = h("p", { class: "muted" });
    const events = h("ul", { class: "events" });

    const searchInput = h("input", { type: "search", name: "q", id: "search-q", required: true, autocomplete: "off", placeholder: "earlier words" });
    const hits = h("div", { class: "hits", "aria-live": "polite" });
    const searchForm = h(
      "form",
      { class: "search", role: "search" },
      h("label", { for: "search-q", class: "visually-hidden", text: "Search the archive" }),
      searchInput,
      h("button", { type: "submit", class: "button" }, "Search"),
    );
    searchForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      const q = searchInput.value.trim();
      if (!q) return;
      hits.replaceChildren(h("p", { class: "muted", text: "Searching…" }));
      try {
        const r = await apiJson(`${path}/search?q=${encodeURIComponent(q)}`);
        hits.replaceChildren(renderHits(id, q, r.hits));
      } catch (err) {
        hits.replaceChildren(h("p", { class: "error", text: `Search failed: ${err.message}` }));
      }
    });

    const el = h(
      "article",
      { class: "session-view", dataset: { session: id }, "aria-labelledby": "session-title" },
      h(
        "header",
        { class: "card session-head" },
        title,
        sub,
        h("div", { class: "actions" }, summarize, clear, confirm),
        status,
      ),
      section("gauge", "Window", gauge),
      section("context", "Context as the model sees it", contextNote, contextList),
      section("records", "Summary records", recordsNote, records),
      section(
        "search",
        "Search the archive",
        h("p", { class: "muted", text: "Full-text search over every message taken out of the context." }),
        searchForm,
        hits,
      ),
      section("events", "Recent events", events),
    );

    let row = null; // the last session row drawn: its window and trigger, for a gauge drawn from an event

    /**
     * A context_summarized event of this session, at once: the gauge, and the context's header, take its
     * tokensAfter (what the session API will say); the messages themselves follow with the refresh the event asks.
     */
    const applyEvent = (event) => {
      if (row === null || event.sessionId !== id) return;
      const window = typeof event.window === "number" ? event.window : row.window;
      gauge.replaceChildren(renderGauge({ tokens: event.tokensAfter, window, trigger: row.trigger }));
      contextNote.replaceChildren(
        h("strong", { class: "context-total", text: `${int(event.tokensAfter)} tokens in the window` }),
        " (compacted just now; loading its messages…)",
      );
    };

    const renderTitle = () => {
      title.replaceChildren(
        h("span", { class: "session-label", text: title.dataset.label ?? id }),
        summarization.isSessionSummarized(id) ? summarizedBadge() : null,
      );
    };

    const render = (d, c) => {
      row = d;
      title.dataset.label = d.label || id;
      renderTitle();
      sub.replaceChildren(
        h("code", { text: d.id }),
        d.model ? ` · ${d.model}` : "",
        d.format ? ` · ${d.format}` : "",
        " · active ",
        timeAgo(d.active_ms),
      );
      gauge.replaceChildren(renderGauge(d));
      renderContext(c, d, contextNote, contextList);
      renderRecords(d, recordsNote, records);
      renderEvents(d, events);
    };
    return { el, render, renderTitle, applyEvent, status: setStatus };
  }

  function renderContext(c, d, note, list) {
    if (!c) {
      note.textContent = "No context recorded yet.";
      list.replaceChildren();
      return;
    }
    const recordOf = new Map();
    for (const r of d.records ?? []) for (const b of r.blocks ?? []) if (!recordOf.has(b)) recordOf.set(b, r.id);
    // The context is the request as it went upstream, its recall blocks in place; a snapshot written by an older
    // version has none, and then the block is shown before the newest user message.
    const inPlace = c.messages.some((m) => m.kind === "recall");
    const items = c.messages.map((m) =>
      m.kind === "recall" && c.recalled?.length ? recallItem(c, m) : contextItem(m, recordOf),
    );
    if (!inPlace && c.recalled?.length) {
      let at = c.messages.length;
      while (at > 0 && c.messages[at - 1].role !== "user") at -= 1;
      items.splice(Math.max(0, at - 1), 0, recallItem(c));
    }
    note.replaceChildren(...contextHeader(c));
    list.replaceChildren(...items);
  }

  function contextItem(m, recordOf) {
    const found = messageTag(m);
    const tag = found
      ? h("span", { class: `kind-tag kind-${found[1]}` }, found[1] === "summary" ? sparkles() : null, found[0])
      : null;
    const body =
      Array.isArray(m.blocks)
        ? m.blocks.map((b) => blockView(b, b.record_id ?? recordOf.get(b.id)))
        : h("div", { class: "text", text: m.text });
    return h(
      "li",
      { class: `msg role-${m.role} kind-${m.kind}`, dataset: { kind: m.kind, index: m.index } },
      h(
        "div",
        { class: "msg-head" },
        h("span", { class: "role", text: m.role }),
        tag,
        h("span", { class: "tokens", text: `${int(m.tokens)} tokens` }),
      ),
      body,
    );
  }

  function blockView(b, recordId) {
    const kind = blockKind(b);
    return h(
      "section",
      { class: `block block-${kind}`, dataset: { block: b.id, kind } },
      h(
        "div",
        { class: "block-head" },
        h("strong", { text: blockLabel(b) }),
        kind === "summary" ? h("span", { class: "depth-tag", text: `depth ${b.depth}` }) : null,
        h("code", { title: b.id, text: b.id }),
      ),
      kind === "summary" ? h("div", { class: "text", text: b.text }) : null,
      recordId
        ? originals(`block:${b.id}`, `record:${recordId}`, `Originals (${plural(b.messages, "message", "messages")}, from the archive)`, () =>
            apiJson(`/api/summaries/${encodeURIComponent(recordId)}/originals`),
          )
        : h("p", { class: "muted", text: "No summary record of this block in the store." }),
    );
  }

  function recallItem(c, m) {
    const ids = c.recalled;
    const tokens = m ? m.tokens : c.recall_tokens;
    return h(
      "li",
      { class: "msg role-user kind-recall", dataset: m ? { kind: "recall", index: m.index } : { kind: "recall" } },
      h(
        "div",
        { class: "msg-head" },
        h("span", { class: "role", text: "user" }),
        h("span", { class: "kind-tag kind-recall", text: "Recalled" }),
        tokens ? h("span", { class: "tokens", text: `${int(tokens)} tokens` }) : null,
      ),
      h("p", {
        class: "text",
        text: `${ids.length} archived ${ids.length === 1 ? "message was" : "messages were"} brought back into the last request, just before the newest user message, because it turned to them again.`,
      }),
      originals(`recall:${ids.join(",")}`, `recall:${ids.join(",")}`, `Recalled originals (${ids.length})`, () =>
        apiJson(`${sessionPath(current)}/originals?ids=${encodeURIComponent(ids.join(","))}`),
      ),
    );
  }

  function renderRecords(d, note, list) {
    const records = d.records ?? [];
    note.textContent = records.length
      ? `${records.length} ${records.length === 1 ? "record" : "records"}, oldest first; each names its parent.`
      : "No compaction yet.";
    list.replaceChildren(...records.map(recordItem));
  }

  function recordItem(r) {
    const facts = [
      fact("Parent", r.parent_id ? h("code", { title: r.parent_id, text: shortId(r.parent_id) }) : "none (first)"),
      fact("Tokens before → after", r.figures ? compactionFigures(r.figures) : "not known"),
      fact("Originals", `${plural(r.messages, "message", "messages")}${typeof r.original_tokens === "number" ? `, ${int(r.original_tokens)} tokens` : ""}`),
    ];
    if (r.kind === "summary") facts.push(fact("Summary", `${int(r.summary_tokens)} tokens`));
    if (r.kind === "summary") facts.push(fact("Written by", modelCoverage(r)));
    return h(
      "li",
      { class: `record record-${r.kind ?? "summary"}`, dataset: { record: r.id, kind: r.kind ?? "summary" } },
      h(
        "div",
        { class: "record-head" },
        h("strong", { class: "record-label", text: recordLabel(r) }),
        r.kind === "summary" ? h("span", { class: "depth-tag", text: `depth ${r.depth}` }) : null,
        h("code", { title: r.id, text: shortId(r.id) }),
        timeAgo(r.timestamp_ms),
      ),
      h("dl", { class: "facts" }, facts),
      r.kind === "summary" ? kept(`text:${r.id}`, "Summary text", h("div", { class: "text", text: r.summary })) : null,
      r.messages > 0
        ? originals(`rec:${r.id}`, `record:${r.id}`, `Originals (${plural(r.messages, "message", "messages")}, from the archive)`, () =>
            apiJson(`/api/summaries/${encodeURIComponent(r.id)}/originals`),
          )
        : null,
    );
  }

  function renderHits(id, q, found) {
    if (!found.length) return h("p", { class: "muted", text: `Nothing in the archive matches “${q}”.` });
    return h(
      "ol",
      { class: "hit-list" },
      found.map((hit) =>
        h(
          "li",
          { class: "hit" },
          h(
            "div",
            { class: "msg-head" },
            h("span", { class: "role", text: hit.role }),
            h("span", { class: "muted", text: `message ${hit.position + 1} of the conversation` }),
          ),
          h("p", { class: "snippet" }, marked(hit.snippet)),
          originals(`hit:${hit.message_id}`, `msg:${hit.message_id}`, "Original", () =>
            apiJson(`${sessionPath(id)}/originals?ids=${encodeURIComponent(hit.message_id)}`),
          ),
        ),
      ),
    );
  }

  /** A <details> that stays open across refreshes. */
  function kept(key, label, ...children) {
    const details = h("details", { class: "kept", dataset: { key } }, h("summary", { text: label }), ...children);
    details.open = open.has(key);
    details.addEventListener("toggle", () => (details.open ? open.add(key) : open.delete(key)));
    return details;
  }

  /** A <details> that fetches originals the first time it opens, and stays open across refreshes. */
  function originals(openKey, cacheKey, label, load) {
    const body = h("div", { class: "originals-body" });
    const details = h("details", { class: "originals", dataset: { key: openKey } }, h("summary", { text: label }), body);
    let filled = false;
    const fill = async () => {
      if (filled) return;
      filled = true;
      body.replaceChildren(h("p", { class: "muted", text: "Loading from the archive…" }));
      try {
        if (!cache.has(cacheKey)) cache.set(cacheKey, load());
        body.replaceChildren(originalsList(await cache.get(cacheKey)));
      } catch (e) {
        cache.delete(cacheKey);
        filled = false;
        body.replaceChildren(h("p", { class: "error", text: `Could not load the originals: ${e.message}` }));
      }
    };
    details.addEventListener("toggle", () => {
      if (details.open) {
        open.add(openKey);
        fill();
      } else open.delete(openKey);
    });
    if (open.has(openKey)) {
      details.open = true;
      fill();
    }
    return details;
  }

  return { show, refresh, current: () => current };
}

function section(name, heading, ...children) {
  const id = `${name}-heading`;
  return h("section", { class: `card section-${name}`, "aria-labelledby": id }, h("h3", { id, text: heading }), ...children);
}

function fact(name, value) {
  return h("div", {}, h("dt", { text: name }), h("dd", {}, value));
}

function emptyView(notice) {
  return h(
    "div",
    { class: "card empty" },
    notice ? h("p", { class: "notice", text: notice }) : null,
    h("h2", { text: "No session open" }),
    h("p", {
      text: "Pick a session from the list, or start a conversation in the chat panel: it goes through the proxy, and this page shows what the model sees, what was summarized and why.",
    }),
  );
}

function renderEvents(d, list) {
  const events = [...(d.events ?? [])].sort((a, b) => b.seq - a.seq);
  if (!events.length) {
    list.replaceChildren(h("li", { class: "muted", text: "No events yet." }));
    return;
  }
  list.replaceChildren(
    ...events.map((e) =>
      h(
        "li",
        { class: `event event-${e.type}`, dataset: { seq: e.seq } },
        timeAgo(e.created_ms),
        h("span", { class: "event-type", text: e.type }),
        h("span", { class: "event-text", text: eventText(e) }),
      ),
    ),
  );
}

/** A compaction in the figures of its event (the banner's words); any other event in its own message. */
function eventText(e) {
  if (e.type !== "context_summarized" || typeof e.tokensRemoved !== "number") return e.message ?? "";
  const recall = recallNote(e);
  const model = typeof e.modelCoverage === "number" ? `; summary by ${modelCoverage(e)}` : "";
  return `${displayMessage(e)}${recall ? `; ${recall}` : ""}${model}`;
}

/** The context's header: the request's tokens as the gauge counts them, and what they are made of. */
function contextHeader(c) {
  const total = typeof c.total_tokens === "number" ? c.total_tokens : c.tokens;
  const parts = [`${int(c.messages.length)} messages: ${int(c.tokens)}`];
  if (c.recall_tokens > 0) parts.push(`recalled originals: ${int(c.recall_tokens)}`);
  if (c.outside_tokens > 0) parts.push(`system prompt, tools, answer room and reply priming: ${int(c.outside_tokens)}`);
  const summaries = c.messages.filter((m) => m.kind === "summary").length;
  return [
    h("strong", { class: "context-total", text: `${int(total)} tokens in the window` }),
    ` (${c.source === "live" ? "live" : "last snapshot"}): ${parts.join("; ")}.`,
    summaries ? ` ${summaries} summary ${summaries === 1 ? "message" : "messages"}.` : "",
  ];
}

function originalsList(r) {
  const messages = r.messages ?? [];
  return h(
    "div",
    { class: "originals-box" },
    r.verified
      ? h("p", { class: "verified", text: "Verified: each message matches the SHA-256 recorded when it was archived." })
      : null,
    h(
      "ol",
      { class: "originals-list" },
      messages.map((m) =>
        h("li", { class: `orig role-${m.role}` }, h("span", { class: "role", text: m.role }), h("div", { class: "text", text: messageText(m) })),
      ),
    ),
    r.missing?.length ? h("p", { class: "muted", text: `${r.missing.length} not in the archive.` }) : null,
  );
}

/** A search snippet with its matches (between "[" and "]", as the store marks them) in <mark>. */
function marked(snippet) {
  const out = [];
  const re = /\[([^\]]*)\]/g;
  let last = 0;
  for (const m of snippet.matchAll(re)) {
    out.push(snippet.slice(last, m.index), h("mark", { text: m[1] }));
    last = m.index + m[0].length;
  }
  out.push(snippet.slice(last));
  return out;
}
