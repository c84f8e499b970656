// What a summary record, a block of the context and a context message are called on the page, from the kind the
// session API gives each (src/chainsum/server/_views.py). Only a record or block with summary text is called a
// summary: a pass that masked tool output says so, one that moved messages to the archive says so, and an empty
// one is never shown as a summary.

import { int } from "./dom.js";

/** "1 message", "9 messages". */
export const plural = (n, one, many) => `${int(n)} ${n === 1 ? one : many}`;

/** The headline of a record: "Summary of 9 messages", "Masked tool output: 3 results", ... */
export function recordLabel(r) {
  switch (r.kind) {
    case "summary":
      return `Summary of ${plural(r.messages, "message", "messages")}`;
    case "masked":
      return typeof r.tool_results === "number" && r.tool_results > 0
        ? `Masked tool output: ${plural(r.tool_results, "result", "results")}`
        : `Masked in place: ${plural(r.messages, "message", "messages")}`;
    case "moved":
      return `Moved to the archive: ${plural(r.messages, "message", "messages")}`;
    case "empty":
      return r.messages > 0 ? `Empty record: no summary text for ${plural(r.messages, "message", "messages")}` : "Empty record: nothing compacted";
    default:
      return `Record of ${plural(r.messages, "message", "messages")}`;
  }
}

/** A block's kind, from the API (older servers gave none: depth 0 only points at the archive). */
export function blockKind(b) {
  if (b.kind) return b.kind;
  if (b.depth === 0) return "moved";
  return (b.text ?? "").trim() ? "summary" : "empty";
}

/** The headline of a block inside a context message. */
export function blockLabel(b) {
  switch (blockKind(b)) {
    case "summary":
      return `Summary of ${plural(b.messages, "message", "messages")}`;
    case "moved":
      return `Moved to the archive: ${plural(b.messages, "message", "messages")}`;
    default:
      return `Empty summary: no text for ${plural(b.messages, "message", "messages")}`;
  }
}

/** The tag of a context message: [text, css kind], or null for an ordinary message. */
export function messageTag(m) {
  switch (m.kind) {
    case "summary":
      return [`Summary · depth ${m.depth ?? 1}`, "summary"];
    case "archived":
      return ["Archived", "archived"];
    case "masked":
      return [`Masked tool output: ${plural(m.masked ?? 1, "result", "results")}`, "masked"];
    case "recall":
      return ["Recalled", "recall"];
    default:
      return null;
  }
}
