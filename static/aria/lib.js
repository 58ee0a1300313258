/* window.Aria — the helpers every page script shares; loaded once from base.html before them.
 *
 *   Aria.el(tag, cls, text)            element with a class and text (always via textContent)
 *   Aria.svg(name, attrs, text)        SVG element with attributes (and text)

 *   Aria.api(method, url, body, opts)  JSON fetch: CSRF on unsafe methods; resolves to the parsed
 *                                      body (null for 204); rejects with an Aria.ApiError
 *                                      {message, status, detail, code, field, allowed, retryAfter}
 *                                      (opts.form: send body as-is, e.g. a FormData upload)
 *   Aria.csrf()                        the csrftoken cookie
 *   Aria.fmtTime / fmtClock / fmtDate / fmtDateTime / fmtShortDate(iso), fmtWindow(start, end),
 *   fmtShift(start, end),
 *   fmtNumber(value)                   every time a page shows goes through these (the viewer's
 *                                      locale and time zone), never a bare toLocaleString: the same
 *                                      instant reads the same on every pane
 *   Aria.offlineMark(engine)           the "offline demo engine" mark for an {engine, real_provider}
 *                                      that is not a real model; null otherwise (no claim either way)
 *
 * Page scripts are strict-mode IIFEs in ES2017 (const/let, arrows, async/await), no build step.
 * No htmx partials: the cards these pages draw are also drawn from live bus frames (Control Room,
 * activity feed, Ask ARIA), so server-rendered partials would be a second renderer, not less code.
 */

(() => {
  "use strict";

  const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };

  const SVG_NS = "http://www.w3.org/2000/svg";
  const svg = (name, attrs, text) => {
    const node = document.createElementNS(SVG_NS, name);
    Object.entries(attrs || {}).forEach(([key, value]) => node.setAttribute(key, String(value)));
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };

  const csrf = () => {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]*)/);
    return match ? decodeURIComponent(match[1]) : "";
  };

  /* One message for every page: "field: detail (allowed: a, b)" (the field once, whether or not
   * the server's detail already starts with it); a validation list [{loc, msg}] names each
   * field; a body without a detail says the HTTP status. */
  const errorMessage = (data, status) => {
    const detail = data && data.detail;
    let text;
    if (Array.isArray(detail)) {
      text = detail
        .map((e) => `${(e.loc || []).filter((part) => part !== "body").join(".")}: ${e.msg}`)
        .join("; ");
    } else {
      text = typeof detail === "string" && detail ? detail : `HTTP ${status}`;
      const field = data && data.field;
      if (field && !text.startsWith(`${field}:`)) text = `${field}: ${text}`;
    }
    if (data && Array.isArray(data.allowed) && data.allowed.length) text += ` (allowed: ${data.allowed.join(", ")})`;
    return text;
  };

  class ApiError extends Error {
    constructor(response, data) {
      super(errorMessage(data, response.status));
      this.name = "ApiError";
      this.status = response.status;
      this.detail = data ? data.detail : undefined;
      this.code = data ? data.code : undefined;
      this.field = data ? data.field : undefined;
      this.allowed = data ? data.allowed : undefined;
      this.retryAfter = response.status === 429 ? Number(response.headers.get("Retry-After")) || null : null;
      this.body = data;
    }
  }

  const api = async (method, url, body, { form = false } = {}) => {
    const headers = { Accept: "application/json" };
    if (!SAFE_METHODS.has(method)) headers["X-CSRFToken"] = csrf();
    if (body !== undefined && body !== null && !form) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined || body === null ? undefined : form ? body : JSON.stringify(body),
    });
    const data = response.status === 204 ? null : await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response, data);
    return data;
  };

  const dateOf = (iso) => {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? null : d;
  };
  /* "14:05:09" in the viewer's locale; "" for a missing or bad timestamp. */
  const fmtTime = (iso) => (dateOf(iso) ? dateOf(iso).toLocaleTimeString() : "");
  /* "30/11/2026, 14:05"; the input itself when it is not a date. */
  const fmtDateTime = (iso) =>
    dateOf(iso) ? dateOf(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : iso;
  /* "Nov 30, 14:05" — chart axes and compact lists. */
  const fmtShortDate = (iso) =>
    dateOf(iso) ? dateOf(iso).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : "";
  /* "30/11/2026" — a day. */
  const fmtDate = (iso) => (dateOf(iso) ? dateOf(iso).toLocaleDateString() : "");
  /* "14:05" — a time of day to the minute (chart axes, the end of a window). */
  const fmtClock = (iso) => (dateOf(iso) ? dateOf(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "");
  /* "30/11/2026, 14:00 – 16:00" — a planned window (its start as fmtDateTime); the end is optional. */
  const fmtWindow = (start, end) => fmtDateTime(start) + (end ? ` – ${fmtClock(end)}` : "");
  /* "Mon 07/12, 06:00 – 14:00" — a shift, picked by its weekday (the roster); the end is optional. */
  const fmtShift = (start, end) => {
    const d = dateOf(start);
    if (!d) return start;
    const day = d.toLocaleDateString([], { weekday: "short", day: "2-digit", month: "2-digit" });
    return `${day}, ${fmtClock(start)}` + (end ? ` – ${fmtClock(end)}` : "");
  };
  /* A measurement: whole numbers from 100 up, two decimals below; "—" when there is none. */
  const fmtNumber = (value) => {
    if (typeof value !== "number" || !Number.isFinite(value)) return "—";
    return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2);
  };

  const offlineMark = (engine) => {
    if (!engine || engine.real_provider !== false) return null;
    const mark = el("span", "offline-mark", "offline demo engine");
    mark.setAttribute("data-engine", String(engine.engine || "fake"));
    mark.title = "Written by ARIA's offline demo engine (a deterministic stand-in), not by an AI model.";
    return mark;
  };

  window.Aria = Object.freeze({ el, svg, api, csrf, errorMessage, ApiError, fmtTime, fmtClock, fmtDate, fmtDateTime, fmtShortDate, fmtWindow, fmtShift, fmtNumber, offlineMark });
})();
