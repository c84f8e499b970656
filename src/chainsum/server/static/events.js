// The handler of the server's events (GET /api/events): the spec's stream-parser handler for
// context_summarized (2.1), and the other events the session API sends (session_cleared, summarization_failed,
// window_exceeded, request_passthrough: a request sent upstream untouched because chainsum could not read it).
// An invalid event is ignored with a console warning and changes nothing.

import { followEvents } from "./api.js";
import { summarization } from "./banner.js";
import { emit, state } from "./state.js";

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isId = (v) => typeof v === "string" && v.length > 0;

/**
 * The spec's `handleContextSummarized`: check the event, then hand it to the service. The banner is for the open
 * session (the page shows one session at a time); an event for another session marks that session's badge only.
 * Stricter than the spec in two ways: a non-object warns too (the spec returns silently), and `sessionId` and
 * `contextCompressionRatio` must be present, since the badge and the banner text read them.
 */
export function handleContextSummarized(data) {
  if (
    !data ||
    typeof data !== "object" ||
    data.type !== "context_summarized" ||
    !isNumber(data.tokensBefore) ||
    !isNumber(data.tokensRemoved) ||
    !isNumber(data.contextCompressionRatio) ||
    !isId(data.sessionId)
  ) {
    console.warn("Invalid context_summarized event:", data);
    return false;
  }
  if (data.sessionId === state.openSession) summarization.setContextSummarized(data);
  else summarization.markSessionSummarized(data.sessionId);
  return true;
}

function validSessionEvent(name, data) {
  if (!data || typeof data !== "object" || data.type !== name || !isId(data.sessionId)) {
    console.warn(`Invalid ${name} event:`, data);
    return false;
  }
  return true;
}

/** One event as the stream names it, with its data (the JSON text, or already parsed). True when it was used. */
export function handleEvent(name, raw) {
  let data = raw;
  if (typeof raw === "string") {
    try {
      data = JSON.parse(raw);
    } catch {
      console.warn(`Invalid ${name} event (not JSON):`, raw);
      return false;
    }
  }
  let ok = false;
  switch (name) {
    case "context_summarized":
      ok = handleContextSummarized(data);
      break;
    case "session_cleared":
      ok = validSessionEvent(name, data);
      if (ok) summarization.clearSession(data.sessionId);
      break;
    case "summarization_failed":
    case "window_exceeded":
    case "request_passthrough":
      ok = validSessionEvent(name, data);
      break;
    default:
      console.warn("Unknown event:", name, data);
  }
  if (ok) emit("event", { name, data });
  return ok;
}

/** Follow the server's events for the life of the page; the header's indicator shows the connection. */
export function startEvents(indicator) {
  const controller = new AbortController();
  const labels = { connecting: "connecting…", live: "live", retrying: "reconnecting…" };
  followEvents({
    signal: controller.signal,
    onEvent: handleEvent,
    onState: (s) => {
      indicator.dataset.state = s;
      indicator.textContent = labels[s] ?? s;
      indicator.title = s === "live" ? "Receiving events as they happen" : "Not receiving events right now";
      if (s === "live") emit("live", null);
    },
  });
  return controller;
}
