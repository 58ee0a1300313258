/*
 * AriaEvents — the browser client of the ARIA event bus (/ws/events). No dependencies.
 *
 *   const conn = AriaEvents.connect({
 *     onFrame:  (frame) => {},   // every bus frame {id, type, ...payload}, once, in arrival order
 *     onStatus: (status, detail) => {},  // "connecting" | "open" | "reconnecting" |
 *                                              // "unauthorized" | "forbidden" | "closed"
 *     onError:  (frame) => {},   // optional: server error frames {type: "error", code, detail}
 *     after:    123,                   // optional: replay stored events with id > after first
 *     types:    ["anomaly_detected"],  // optional: only pass these event types to onFrame
 *     url:      "/ws/events",          // optional: path or absolute ws(s):// URL
 *     minDelay: 500, maxDelay: 15000   // optional: reconnect backoff bounds in ms
 *   });
 *   conn.lastId();  conn.status();  conn.close();
 *
 * Pass `after` (e.g. the newest event id in the server-rendered page) so that a drop before the
 * first frame loses nothing; without it the first connection starts at the live end.
 * It asks for ?batch=1: a message is one event or an array of events (each passed to onFrame).
 * On a drop it reconnects with exponential backoff (with jitter) and asks for ?after=<last id>,
 * so the server replays what was missed before live frames. Frames are de-duplicated by id, so
 * onFrame never sees an id twice. Close code 4401 (not signed in) stops reconnecting and reports
 * "unauthorized"; 4403 (no scope) stops with "forbidden"; 4400 (bad request) stops with "closed".
 * Several panels of a page may each call connect(); each gets its own socket.
 */
((global) => {
  "use strict";

  const SEEN_LIMIT = 5000;

  function socketUrl(path, after) {
    let url;
    if (/^wss?:\/\//.test(path)) {
      url = new URL(path);
    } else {
      const loc = global.location;
      url = new URL(path, (loc.protocol === "https:" ? "wss://" : "ws://") + loc.host);
    }
    if (after !== null && after !== undefined) url.searchParams.set("after", String(after));
    url.searchParams.set("batch", "1");  // the server may send several events as one JSON array
    return url.toString();
  }

  function connect(options) {
    const opts = options || {};
    const onFrame = opts.onFrame || (() => {});
    const onStatus = opts.onStatus || (() => {});
    const onError = opts.onError || (() => {});
    const path = opts.url || "/ws/events";
    const minDelay = opts.minDelay || 500;
    const maxDelay = opts.maxDelay || 15000;
    const types = opts.types ? new Set(opts.types) : null;

    let lastId = typeof opts.after === "number" && opts.after >= 0 ? opts.after : null;
    const seen = new Set();
    const seenOrder = [];
    let socket = null;
    let attempts = 0;
    let timer = null;
    let stopped = false;
    let current = "connecting";

    function setStatus(status, detail) {
      current = status;
      try { onStatus(status, detail); } catch (err) { console.error(err); }
    }

    function remember(id) {
      seen.add(id);
      seenOrder.push(id);
      if (seenOrder.length > SEEN_LIMIT) seen.delete(seenOrder.shift());
    }

    function handle(message) {
      let data;
      try { data = JSON.parse(message.data); } catch (err) { return; }
      // One event, or (?batch=1) an array of events in delivery order.
      if (Array.isArray(data)) data.forEach(handleFrame);
      else handleFrame(data);
    }

    function handleFrame(frame) {
      if (!frame || typeof frame !== "object") return;
      if (frame.type === "error" && typeof frame.id !== "number") {
        try { onError(frame); } catch (err) { console.error(err); }
        return;
      }
      if (typeof frame.id !== "number" || seen.has(frame.id)) return;
      remember(frame.id);
      if (lastId === null || frame.id > lastId) lastId = frame.id;
      if (types && !types.has(frame.type)) return;
      try { onFrame(frame); } catch (err) { console.error(err); }
    }

    function schedule() {
      if (stopped) return;
      let delay = Math.min(maxDelay, minDelay * Math.pow(2, attempts));
      delay = delay / 2 + Math.random() * delay / 2;
      attempts += 1;
      setStatus("reconnecting", { inMs: Math.round(delay), attempt: attempts });
      timer = global.setTimeout(open, delay);
    }

    function open() {
      timer = null;
      if (stopped) return;
      setStatus(attempts === 0 ? "connecting" : "reconnecting", { attempt: attempts });
      let ws;
      try {
        ws = new global.WebSocket(socketUrl(path, lastId));
      } catch (err) {
        schedule();
        return;
      }
      socket = ws;
      ws.onopen = () => {
        attempts = 0;
        setStatus("open");
      };
      ws.onmessage = handle;
      ws.onclose = (event) => {
        if (socket === ws) socket = null;
        if (stopped) return;
        if (event.code === 4401) {
          stopped = true;
          setStatus("unauthorized", { code: event.code });
          return;
        }
        if (event.code === 4403) {  // no role in ARIA (or it was taken away): retrying will not help
          stopped = true;
          setStatus("forbidden", { code: event.code });
          return;
        }
        if (event.code === 4400) {
          stopped = true;
          setStatus("closed", { code: event.code });
          return;
        }
        schedule();
      };
    }

    open();

    return {
      lastId: () => lastId,
      status: () => current,
      close: () => {
        stopped = true;
        if (timer) global.clearTimeout(timer);
        if (socket) socket.close(1000);
        setStatus("closed");
      }
    };
  }

  global.AriaEvents = { connect };
})(window);
