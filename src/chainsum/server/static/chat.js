// The chat panel: a conversation with the upstream model through the proxy (POST /v1/chat/completions with
// stream: true), so the whole flow can be watched: the history grows, the proxy compacts it, the banner appears,
// the badge stays.
//
// It is an ordinary OpenAI-style client: it sends its full history every turn; X-Chainsum-Session names the
// session, X-Chainsum-Context-Window sets the window. The proxy announces a compaction with an SSE comment line
// (": context_summarized {json}") before the first chunk; the panel notes it in the transcript. The page's API
// token is never sent here (the proxy would forward it upstream); an upstream key, if the model server needs one,
// goes in its own field and is kept only in memory.

import { displayMessage } from "./figures.js";
import { h } from "./dom.js";
import { readSSE } from "./sse.js";
import { emit, on, state } from "./state.js";

const SETTINGS_KEY = "chainsum-chat";

export function mountChat(root) {
  const $ = (sel) => root.querySelector(sel);
  const form = $("#chat-form");
  const input = $("#chat-input");
  const send = $("#chat-send");
  const stop = $("#chat-stop");
  const log = $("#chat-log");
  const status = $("#chat-status");
  const fields = { session: $("#chat-session"), model: $("#chat-model"), window: $("#chat-window"), key: $("#chat-key") };
  const openLink = $("#chat-open");

  let messages = [];
  let controller = null;

  const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? "{}");
  fields.session.value = saved.session ?? "web-chat";
  fields.model.value = saved.model ?? "";
  fields.window.value = saved.window ?? "";
  const save = () =>
    localStorage.setItem(
      SETTINGS_KEY,
      JSON.stringify({ session: fields.session.value, model: fields.model.value, window: fields.window.value }),
    );
  for (const f of [fields.session, fields.model, fields.window]) f.addEventListener("change", save);
  fields.session.addEventListener("change", () => reset("New session name: a new conversation."));

  suggestModels(fields.model, $("#chat-models"));

  const setStatus = (text, isError = false) => {
    status.textContent = text;
    status.classList.toggle("error", isError);
  };

  function reset(note) {
    controller?.abort();
    messages = [];
    log.replaceChildren();
    setStatus(note ?? "");
  }

  function bubble(role, text) {
    const body = h("div", { class: "chat-text", text });
    const item = h("li", { class: `chat-msg chat-${role}` }, h("span", { class: "chat-role", text: role }), body);
    log.append(item);
    log.scrollTop = log.scrollHeight;
    return { item, body };
  }

  function note(text) {
    log.append(h("li", { class: "chat-note", text }));
  }

  async function turn(text) {
    const model = fields.model.value.trim();
    if (!model) {
      setStatus("Name a model first.", true);
      fields.model.focus();
      return;
    }
    const windowText = fields.window.value.trim();
    if (windowText && !/^[1-9]\d*$/.test(windowText)) {
      setStatus("The context window is a whole number of tokens.", true);
      fields.window.focus();
      return;
    }
    messages.push({ role: "user", content: text });
    bubble("user", text);
    const reply = bubble("assistant", "");
    reply.item.setAttribute("aria-busy", "true");
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    const session = fields.session.value.trim();
    if (session) headers["X-Chainsum-Session"] = session;
    if (windowText) headers["X-Chainsum-Context-Window"] = windowText;
    const key = fields.key.value.trim();
    if (key) headers.Authorization = `Bearer ${key}`;

    controller = new AbortController();
    send.disabled = true;
    stop.hidden = false;
    setStatus("Waiting for the model…");
    let answer = "";
    try {
      const response = await fetch("/v1/chat/completions", {
        method: "POST",
        headers,
        body: JSON.stringify({ model, messages, stream: true }),
        signal: controller.signal,
      });
      if (!response.ok) {
        let message = `${response.status} ${response.statusText}`;
        try {
          message = (await response.json())?.error?.message ?? message;
        } catch {}
        throw new Error(message);
      }
      const sid = response.headers.get("X-Chainsum-Session");
      if (sid) {
        state.chatSession = sid;
        openLink.href = `#/s/${encodeURIComponent(sid)}`;
        openLink.hidden = false;
      }
      if ((response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
        for await (const item of readSSE(response.body)) {
          if (item.kind === "comment") {
            announced(item.text);
            continue;
          }
          if (item.event === "context_summarized") {
            announced(`context_summarized ${item.data}`);
            continue;
          }
          if (item.data === "[DONE]") break;
          const chunk = JSON.parse(item.data);
          if (chunk.error) throw new Error(chunk.error.message ?? "the model reported an error");
          const delta = chunk.choices?.[0]?.delta?.content;
          if (typeof delta === "string" && delta) {
            answer += delta;
            reply.body.textContent = answer;
            log.scrollTop = log.scrollHeight;
          }
        }
      } else {
        answer = (await response.json())?.choices?.[0]?.message?.content ?? "";
        reply.body.textContent = answer;
      }
      messages.push({ role: "assistant", content: answer });
      setStatus("");
      emit("chat-turn", { sessionId: sid });
    } catch (e) {
      messages.pop(); // the turn did not happen: send it again, or something else
      reply.item.remove();
      const aborted = e.name === "AbortError";
      setStatus(aborted ? "Stopped." : `The request failed: ${e.message}`, !aborted);
      if (!aborted) input.value = text;
    } finally {
      reply.item.removeAttribute("aria-busy");
      controller = null;
      send.disabled = false;
      stop.hidden = true;
    }
  }

  function announced(text) {
    if (!text.startsWith("context_summarized ")) return; // any other comment (a keep-alive ping) is skipped
    try {
      const event = JSON.parse(text.slice("context_summarized ".length));
      note(`${displayMessage(event)} before this reply.`);
    } catch {
      console.warn("Unreadable context_summarized announcement:", text);
    }
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || controller) return;
    input.value = "";
    turn(text);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", () => controller?.abort());
  $("#chat-new").addEventListener("click", () => reset("A new conversation."));
  on("cleared", ({ sessionId }) => {
    if (sessionId === state.chatSession) reset("The session was cleared: a new conversation.");
  });
  on("event", ({ name, data }) => {
    if (name === "session_cleared" && data.sessionId === state.chatSession && messages.length) {
      reset("The session was cleared: a new conversation.");
    }
  });
  return { reset, messages: () => messages };
}

/** Fill the model field's suggestions from GET /v1/models (passed through to the upstream), when it answers. */
async function suggestModels(input, datalist) {
  try {
    const response = await fetch("/v1/models", { headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const body = await response.json();
    const ids = (body?.data ?? []).map((m) => m?.id).filter((id) => typeof id === "string");
    datalist.replaceChildren(...ids.map((id) => h("option", { value: id })));
    if (!input.value && ids.length) input.value = ids[0];
  } catch {
    // no model list: the field is typed by hand
  }
}
