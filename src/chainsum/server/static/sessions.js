// The sessions list: name, last activity, tokens in use against the window, compactions, and the spec's badge
// on every summarized session. It stays in view beside the open session (a sticky column; on a phone, above it).

import { apiJson } from "./api.js";
import { summarization } from "./banner.js";
import { h, int, percent, summarizedBadge, timeAgo } from "./dom.js";
import { state } from "./state.js";

export function mountSessions(list, empty, error) {
  let rows = [];
  let loaded = false;

  let drawn = "";
  const render = () => {
    empty.hidden = !loaded || rows.length > 0;
    const items = rows.map(item);
    const html = items.map((i) => i.outerHTML).join("");
    if (html === drawn) return; // nothing changed: keep the DOM (and a keyboard user's focus) as it is
    drawn = html;
    const focused = list.contains(document.activeElement)
      ? document.activeElement.closest(".session-item")?.dataset.session
      : undefined;
    list.replaceChildren(...items);
    if (focused !== undefined) {
      list.querySelector(`.session-item[data-session="${CSS.escape(focused)}"] a`)?.focus();
    }
  };

  const refresh = async () => {
    try {
      const body = await apiJson("/api/sessions");
      rows = [...body.sessions].sort((a, b) => (b.active_ms ?? 0) - (a.active_ms ?? 0));
      for (const row of rows) if (row.summarized) summarization.markSessionSummarized(row.id);
      error.hidden = true;
    } catch (e) {
      error.textContent = `Could not load the sessions: ${e.message}`;
      error.hidden = false;
    }
    loaded = true;
    render();
    return rows;
  };

  summarization.addEventListener("change", render);
  setInterval(render, 15000); // the "ago" labels
  return { refresh, render, rows: () => rows };
}

function item(row) {
  const open = row.id === state.openSession;
  const tokens = typeof row.window === "number" ? `${int(row.tokens)} / ${int(row.window)} tokens` : `${int(row.tokens)} tokens`;
  const ratio = typeof row.window === "number" && row.window > 0 ? row.tokens / row.window : null;
  const compactions = `${int(row.compactions)} ${row.compactions === 1 ? "compaction" : "compactions"}`;
  return h(
    "li",
    { class: "session-item", dataset: { session: row.id } },
    h(
      "a",
      { href: `#/s/${encodeURIComponent(row.id)}`, "aria-current": open ? "page" : null },
      h(
        "span",
        { class: "session-name" },
        h("span", { class: "session-label", text: row.label || row.id }),
        summarization.isSessionSummarized(row.id) ? summarizedBadge() : null,
      ),
      h(
        "span",
        { class: "session-meta" },
        timeAgo(row.active_ms),
        h("span", { class: "session-tokens", text: tokens }),
        h("span", { class: "session-compactions", text: compactions }),
      ),
      ratio === null
        ? null
        : h(
            "span",
            { class: "mini-gauge", "aria-hidden": "true", title: percent(ratio) },
            h("span", {
              class: `mini-fill ${ratio >= (row.trigger ?? 1) ? "over" : ""}`,
              style: `width: ${Math.min(100, ratio * 100).toFixed(1)}%`,
            }),
          ),
    ),
  );
}
