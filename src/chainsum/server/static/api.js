// The session API: fetch with the bearer token, the token prompt, and the event stream.
//
// Every /api/* call answers 401 without a token: the server's own (chainsum serve prints the page's URL with it,
// ?token=...), or a client's API key, which opens that client's sessions only. A token in the address is taken
// into sessionStorage (this tab only, gone when it closes) and out of the address bar, so it is neither
// bookmarked nor shared with the URL. Without one, the page asks once (a small form in a dialog) and sends it with
// every call and with the event stream. A refused token asks again, saying so.

import { readSSE } from "./sse.js";

const TOKEN_KEY = "chainsum-api-token";

const address = new URL(location.href);
if (address.searchParams.has("token")) {
  const given = address.searchParams.get("token").trim();
  if (given) sessionStorage.setItem(TOKEN_KEY, given);
  address.searchParams.delete("token");
  history.replaceState(history.state, "", address.pathname + address.search + address.hash);
}

let token = sessionStorage.getItem(TOKEN_KEY);
let asking = null;

// Nothing works without the token, so the prompt cannot be escaped: Escape is refused, and should the browser
// close the dialog anyway (a repeated Escape), it opens again while the prompt is pending.
const dialog = document.getElementById("token-dialog");
dialog?.addEventListener("cancel", (e) => e.preventDefault());
dialog?.addEventListener("close", () => {
  if (asking && !dialog.open) dialog.showModal();
});

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// X-Chainsum-Request marks the page's own calls: a state-changing call needs it (or a JSON body or the token),
// which no cross-site form can send (the server refuses those; a server run with --no-auth has no token to rely on).
export function authHeaders() {
  return token ? { Authorization: `Bearer ${token}`, "X-Chainsum-Request": "page" } : { "X-Chainsum-Request": "page" };
}

/** fetch(path) with the token; on 401, ask for a token and try again. */
export async function apiFetch(path, init = {}) {
  for (;;) {
    const sent = token;
    const response = await fetch(path, { ...init, headers: { ...(init.headers ?? {}), ...authHeaders() } });
    if (response.status !== 401) return response;
    if (sent !== token) continue; // another call already got a new token while this one was in flight
    await askToken(Boolean(sent));
  }
}

/** The JSON answer of an API call; throws `ApiError` with the server's message for an error status. */
export async function apiJson(path, init = {}) {
  const response = await apiFetch(path, { ...init, headers: { Accept: "application/json", ...(init.headers ?? {}) } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body?.error?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return body;
}

export const sessionPath = (id) => `/api/sessions/${encodeURIComponent(id)}`;

/** Show the token form; resolves once a token was entered (one prompt however many calls wait for it). */
export function askToken(refused) {
  if (asking) return asking;
  asking = new Promise((resolve) => {
    const form = document.getElementById("token-form");
    const input = document.getElementById("token-input");
    const error = document.getElementById("token-error");
    error.hidden = !refused;
    input.value = "";
    input.setAttribute("aria-invalid", refused ? "true" : "false");
    const onSubmit = (e) => {
      e.preventDefault();
      const value = input.value.trim();
      if (!value) {
        input.focus();
        return;
      }
      form.removeEventListener("submit", onSubmit);
      token = value;
      sessionStorage.setItem(TOKEN_KEY, value);
      asking = null;
      dialog.close();
      resolve();
    };
    form.addEventListener("submit", onSubmit);
    dialog.showModal();
    input.focus();
  });
  return asking;
}

/**
 * Follow GET /api/events until `signal` aborts: `onEvent(name, data)` for each event, `onState(state)` with
 * "connecting", "live" or "retrying". Reconnects after a drop with Last-Event-ID, so nothing is missed.
 */
export async function followEvents({ onEvent, onState, signal }) {
  let lastId = null;
  let delay = 500;
  while (!signal.aborted) {
    onState(lastId === null ? "connecting" : "retrying");
    try {
      const headers = { Accept: "text/event-stream", ...authHeaders() };
      if (lastId !== null) headers["Last-Event-ID"] = lastId;
      const response = await fetch("/api/events", { headers, signal, cache: "no-store" });
      if (response.status === 401) {
        await askToken(Boolean(headers.Authorization));
        continue;
      }
      if (!response.ok || !response.body) throw new ApiError(response.status, "event stream refused");
      onState("live");
      delay = 500;
      for await (const item of readSSE(response.body)) {
        if (item.kind !== "event") continue;
        if (item.id !== null) lastId = item.id;
        onEvent(item.event, item.data);
      }
    } catch (error) {
      if (signal.aborted) return;
      console.info("event stream interrupted; reconnecting", error);
    }
    onState("retrying");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 15000);
  }
}
