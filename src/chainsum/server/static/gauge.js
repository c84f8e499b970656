// The window gauge: the tokens of the request the model gets (system prompt, tools and recalled originals
// included: the session's `tokens`, and a compaction event's `tokensAfter`, which are the same count) against the
// window, with the trigger line. Drawn from the session API and again, at once, from each context_summarized event
// of the open session: the gauge moves with the banner.

import { h, int, percent } from "./dom.js";

/** `d`: {tokens, window, trigger} (a session row, or an event's figures with the row's trigger). */
export function renderGauge(d) {
  const { tokens, window, trigger } = d;
  if (typeof window !== "number" || window <= 0) {
    return h("p", { class: "muted", text: `${int(tokens)} tokens in use; the window is not known.` });
  }
  const ratio = tokens / window;
  const level = ratio >= 1 ? "full" : ratio >= trigger ? "over" : "ok";
  return h(
    "div",
    { class: "gauge-wrap" },
    h(
      "div",
      {
        class: `gauge ${level}`,
        id: "gauge",
        role: "meter",
        "aria-label": "Tokens in use against the window",
        "aria-valuemin": 0,
        "aria-valuemax": window,
        "aria-valuenow": tokens,
        "aria-valuetext": `${int(tokens)} of ${int(window)} tokens (${percent(ratio)}); compaction triggers at ${percent(trigger)}`,
        dataset: { tokens, window, trigger },
      },
      h("div", { class: "gauge-fill", style: `width: ${Math.min(100, ratio * 100).toFixed(2)}%` }),
      h("div", { class: "gauge-trigger", style: `left: ${(trigger * 100).toFixed(2)}%`, title: `Trigger: ${percent(trigger)} of the window` }),
    ),
    h(
      "div",
      { class: "gauge-legend" },
      h("span", { class: "gauge-value", text: `${int(tokens)} / ${int(window)} tokens (${percent(ratio)})` }),
      h("span", { class: "gauge-trigger-label", text: `trigger at ${int(trigger * window)} (${percent(trigger)})` }),
    ),
  );
}
