// Small DOM helpers shared by the page's modules: element building (text always goes in as text, never as
// HTML: conversation content is untrusted), the two inline icons, and number and time formatting.

/** An element: `props` sets attributes (`class`, `text`, `dataset`, `on<event>` listeners), `children` append. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

const SVG = "http://www.w3.org/2000/svg";

function icon(paths, cls) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.5");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon ${cls}`);
  for (const d of paths) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("stroke-linecap", "round");
    path.setAttribute("stroke-linejoin", "round");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

// Heroicons "sparkles" and "x-mark" (outline, 24px; MIT licence, https://heroicons.com), the spec's two icons,
// inline because no emoji or icon font can be assumed.
const SPARKLES = [
  "M9.813 15.904 9 18.75l-.813-2.846a4.5 4.5 0 0 0-3.09-3.09L2.25 12l2.846-.813a4.5 4.5 0 0 0 3.09-3.09L9 5.25l.813 " +
    "2.846a4.5 4.5 0 0 0 3.09 3.09L15.75 12l-2.846.813a4.5 4.5 0 0 0-3.09 3.09Z",
  "M18.259 8.715 18 9.75l-.259-1.035a3.375 3.375 0 0 0-2.455-2.456L14.25 6l1.036-.259a3.375 3.375 0 0 0 " +
    "2.455-2.456L18 2.25l.259 1.035a3.375 3.375 0 0 0 2.456 2.456L21.75 6l-1.035.259a3.375 3.375 0 0 0-2.456 2.456Z",
  "M16.894 20.567 16.5 21.75l-.394-1.183a2.25 2.25 0 0 0-1.423-1.423L13.5 18.75l1.183-.394a2.25 2.25 0 0 0 " +
    "1.423-1.423l.394-1.183.394 1.183a2.25 2.25 0 0 0 1.423 1.423l1.183.394-1.183.394a2.25 2.25 0 0 0-1.423 1.423Z",
];
const X_MARK = ["M6 18 18 6M6 6l12 12"];

export const sparkles = (cls = "") => icon(SPARKLES, `icon-sparkles ${cls}`);
export const xMark = (cls = "") => icon(X_MARK, `icon-x ${cls}`);

export const SUMMARIZED_LABEL = "Context has been summarized";

/** The spec's session badge: the sparkles, with the tooltip and the accessible name. */
export function summarizedBadge() {
  return h("span", { class: "badge", role: "img", title: SUMMARIZED_LABEL, "aria-label": SUMMARIZED_LABEL }, sparkles());
}

export const int = (n) => (typeof n === "number" && Number.isFinite(n) ? Math.round(n).toLocaleString() : "–");

export const percent = (ratio) => `${Math.round(ratio * 100)}%`;

export function shortId(id) {
  if (typeof id !== "string") return "";
  return id.length > 14 ? `${id.slice(0, 12)}…` : id;
}

/** `<time>` with a relative label ("12 s ago") and the exact time as its tooltip. */
export function timeAgo(ms) {
  if (typeof ms !== "number") return h("span", { class: "muted", text: "–" });
  const date = new Date(ms);
  return h("time", { datetime: date.toISOString(), title: date.toLocaleString(), text: ago(ms) });
}

export function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.round(m / 60);
  if (hours < 48) return `${hours} h ago`;
  return new Date(ms).toLocaleDateString();
}

/** The text of a message as the archive stores it (`chainsum.messages.message_to_dict`). */
export function messageText(message) {
  const parts = Array.isArray(message?.parts) ? message.parts : [];
  return parts.map(partText).filter(Boolean).join("\n");
}

function partText(part) {
  switch (part?.kind) {
    case "text":
      return part.text ?? "";
    case "reasoning":
      return part.text ? `(reasoning) ${part.text}` : "(reasoning)";
    case "tool_call":
      return `→ ${part.name}(${typeof part.arguments === "string" ? part.arguments : JSON.stringify(part.arguments)})`;
    case "tool_result": {
      const body = typeof part.content === "string" ? part.content : (part.content ?? []).map(partText).join("\n");
      return `← ${part.name ?? part.call_id}: ${body}`;
    }
    case "image":
    case "file":
      return `[${part.kind}${part.name ? ` ${part.name}` : ""}]`;
    default:
      return part?.kind ? `[${part.kind}]` : "";
  }
}
