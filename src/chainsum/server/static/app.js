// The page's entry point: mounts the parts, routes #/s/<session>, and keeps the list and the open session fresh
// (on every server event, after each chat turn, and every few seconds for clients that talk to the proxy without
// compacting, which sends no event).

import { mountBanner, summarization } from "./banner.js";
import { mountChat } from "./chat.js";
import { startEvents } from "./events.js";
import { mountSession } from "./session.js";
import { mountSessions } from "./sessions.js";
import { debounce, on, state } from "./state.js";

const sessions = mountSessions(
  document.getElementById("session-list"),
  document.getElementById("sessions-empty"),
  document.getElementById("sessions-error"),
);
const view = mountSession(document.getElementById("session-view"));
mountBanner(document.getElementById("banner"));
mountChat(document.getElementById("chat"));

let routed = false;
function route() {
  const match = location.hash.match(/^#\/s\/(.+)$/);
  const id = match ? decodeURIComponent(match[1]) : null;
  if (routed && id === state.openSession && view.current() === id) return;
  routed = true;
  state.openSession = id;
  if (summarization.contextSummarized && summarization.contextSummarized.sessionId !== id) {
    summarization.dismissBanner(); // the banner speaks of the open session only
  }
  sessions.render();
  view.show(id);
  document.title = id ? `${id} · chainsum` : "chainsum";
}

const refreshList = debounce(() => sessions.refresh(), 150);
const refreshView = debounce(() => state.openSession !== null && view.refresh(), 150);

on("event", ({ data }) => {
  refreshList();
  // A cleared session has nothing left to show (asking would only get a 404): the clearing code routes away.
  if (data.sessionId === state.openSession && data.type !== "session_cleared") refreshView();
});
on("chat-turn", ({ sessionId }) => {
  refreshList();
  if (!sessionId) return;
  if (state.openSession === null) location.hash = `#/s/${encodeURIComponent(sessionId)}`;
  else if (sessionId === state.openSession) refreshView();
});
on("cleared", () => refreshList());
on("live", () => refreshList());

let seen = "";
let polling = false;
setInterval(async () => {
  if (document.hidden || polling) return; // one poll at a time (one may wait on the token prompt)
  polling = true;
  try {
    const rows = await sessions.refresh();
    const open = rows.find((r) => r.id === state.openSession);
    const key = open ? `${open.id}/${open.active_ms}/${open.tokens}/${open.compactions}` : "";
    if (open && key !== seen) refreshView();
    seen = key;
  } finally {
    polling = false;
  }
}, 5000);

window.addEventListener("hashchange", route);
route();
sessions.refresh();
startEvents(document.getElementById("live"));
