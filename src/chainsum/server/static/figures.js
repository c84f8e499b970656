// One compaction's figures, as every place on the page that speaks of it shows them: the banner, the chat's note,
// the note of "Summarize now", the recent events and the summary records.
//
// The server counts a compaction once: the request the model gets before and after it (system prompt, tools and
// the recall block included, as the window gauge counts), and the removed tokens and the ratio with them, in the
// context_summarized event (and a record's `figures`). This module only writes those numbers out, exactly (no
// "~2K" beside "1,578"): nothing here works out figures of its own, so no two places can disagree. The server's
// twin is `ContextSummarizedEvent.display_message`.

import { int } from "./dom.js";

/** "4,797 → 3,965 tokens (832 fewer, 17% reduction)"; "(60 more)" when recalled originals outweighed the removal. */
export function compactionFigures(event) {
  const pair = `${int(event.tokensBefore)} → ${int(event.tokensAfter)} tokens`;
  if (event.tokensRemoved >= 0) {
    const percent = Math.round(event.contextCompressionRatio * 100);
    return `${pair} (${int(event.tokensRemoved)} fewer, ${percent}% reduction)`;
  }
  return `${pair} (${int(-event.tokensRemoved)} more)`;
}

/** The banner's text: "Context optimized: 4,797 → 3,965 tokens (832 fewer, 17% reduction)". */
export function displayMessage(event) {
  return event ? `Context optimized: ${compactionFigures(event)}` : "";
}

/** "the 3,965 include 746 tokens recalled from the archive", or "" when none were (or it is not known). */
export function recallNote(event) {
  const n = event?.recallTokens;
  if (typeof n !== "number" || n <= 0) return "";
  return `the ${int(event.tokensAfter)} include ${int(n)} tokens recalled from the archive`;
}

/**
 * Who wrote a summary: "the model (read 100% of what it summarizes)", or the extractive summarizer when no model
 * is configured, with the server's note of what was summarized model-free. `r` is a record (`model_coverage`,
 * `model_free`) or an event (`modelCoverage`).
 */
export function modelCoverage(r) {
  const share = r?.model_coverage ?? r?.modelCoverage;
  if (typeof share !== "number") return "the extractive summarizer (no model configured)";
  const said = `the model (read ${Math.floor(share * 1000) / 10}% of what it summarizes)`;
  return r.model_free ? `${said}; ${r.model_free}` : said;
}
