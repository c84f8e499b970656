// The spec's ContextSummarizationService and its inline banner
// (../shared/specs/summarizing-manager-events.md, 2.2 and 2.3), as a plain ES module.
//
// The service holds the current context_summarized event (the banner shows while there is one) and the set of
// sessions that have been summarized (their badge, which outlives the banner). Dismissing clears the event and
// keeps the badge; clearing a session removes its badge, and the banner if the banner was for it. The session
// view listens to the same service, so the gauge moves with the banner, from the same event.
//
// The banner's text is the page's one way of writing a compaction's figures (figures.js), exact: the spec's
// "~13K tokens compressed" rounding read as another number beside the exact ones shown elsewhere.

import { h, sparkles, xMark } from "./dom.js";
import { displayMessage } from "./figures.js";

export class ContextSummarizationService extends EventTarget {
  #event = null;
  #sessions = new Set();

  /** The current event, or null. */
  get contextSummarized() {
    return this.#event;
  }

  /** A copy of the set of summarized session ids. */
  get summarizedSessions() {
    return new Set(this.#sessions);
  }

  get showNotificationBanner() {
    return this.#event !== null;
  }

  get displayMessage() {
    return displayMessage(this.#event);
  }

  isSessionSummarized(sessionId) {
    return this.#sessions.has(sessionId);
  }

  /** A new event: show the banner and mark its session summarized. */
  setContextSummarized(event) {
    this.#event = event;
    this.#sessions.add(event.sessionId);
    this.#changed();
  }

  /** Mark a session summarized without a banner (an event for another session, or what the server says). */
  markSessionSummarized(sessionId) {
    if (this.#sessions.has(sessionId)) return;
    this.#sessions.add(sessionId);
    this.#changed();
  }

  /** Hide the banner; the session stays marked. */
  dismissBanner() {
    if (this.#event === null) return;
    this.#event = null;
    this.#changed();
  }

  /** Forget a session's summarization (it was cleared), and its banner if the banner is for it. */
  clearSession(sessionId) {
    const had = this.#sessions.delete(sessionId);
    const banner = this.#event?.sessionId === sessionId;
    if (banner) this.#event = null;
    if (had || banner) this.#changed();
  }

  #changed() {
    this.dispatchEvent(new Event("change"));
  }
}

/** The page's one service. */
export const summarization = new ContextSummarizationService();

/**
 * Render the banner into `region` (a persistent element with role="status" and aria-live="polite", so that
 * screen readers announce the text when it appears) whenever the service's event changes.
 */
export function mountBanner(region, service = summarization) {
  let shown = undefined;
  const render = () => {
    const event = service.contextSummarized;
    if (event === shown) return; // only the badges changed: do not re-announce
    shown = event;
    const hadFocus = region.contains(document.activeElement);
    region.replaceChildren();
    if (event === null) {
      if (hadFocus) document.getElementById("main")?.focus({ preventScroll: true });
      return;
    }
    region.append(
      h(
        "div",
        { class: "banner", dataset: { session: event.sessionId } },
        sparkles("banner-icon"),
        h("span", { class: "banner-text", text: service.displayMessage }),
        h(
          "button",
          {
            type: "button",
            class: "icon-button banner-dismiss",
            "aria-label": "Dismiss notification",
            title: "Dismiss notification",
            onclick: (e) => {
              e.stopPropagation();
              service.dismissBanner();
            },
          },
          xMark(),
        ),
      ),
    );
  };
  service.addEventListener("change", render);
  render();
}
