// What the page's modules share: the open session, the chat's session, and a small event bus between them.

export const state = {
  /** The session shown in the main view (from the URL, `#/s/<id>`), or null. */
  openSession: null,
  /** The session the chat panel talks in (as the proxy named it, `X-Chainsum-Session`), or null. */
  chatSession: null,
};

const bus = new EventTarget();

/** Listen to `name` ("event": a valid server event; "chat-turn"; "cleared"; "route"). */
export function on(name, listener) {
  bus.addEventListener(name, (e) => listener(e.detail));
}

export function emit(name, detail) {
  bus.dispatchEvent(new CustomEvent(name, { detail }));
}

/** `fn` at most once per `ms`, after the last call. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
