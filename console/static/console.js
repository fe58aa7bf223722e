// The approval console's script. The page works without it; with it, the
// page refreshes itself when runs change (new pauses appear without a
// reload), asks before a rollback, and keeps a form from being sent twice.
//
// A refresh never moves what is under the pointer: a click aimed at one
// run's Approve must not land on another's. While the pointer is over the
// page's content and the page has a decision to offer (a form that
// posts), a change is announced (a notice fixed at the bottom of the
// window, out of the flow of the page, and the live region) and shown
// when the pointer leaves the content, or at once with the notice's
// button.
"use strict";
(() => {
  const every = 2000;
  let version = document.body.dataset.version || "";
  const live = document.getElementById("live");
  const notice = document.getElementById("notice");
  const noticeText = document.getElementById("notice-text");
  const content = () => document.querySelector("main#content");

  // busy: the person is typing in a field of the page, or has a form on
  // its way; a refresh would lose that.
  let sending = false;
  const busy = () => {
    const a = document.activeElement;
    return sending || (a && a.matches("main input:not([type=hidden]), main select") && a.value !== "");
  };

  // refresh replaces the page's main part with the current one, keeping
  // open what the person opened.
  const refresh = async () => {
    const res = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.querySelector("main#content");
    const main = document.querySelector("main#content");
    if (!fresh || !main) {
      location.reload(); // logged out meanwhile: show the login form
      return;
    }
    const open = new Set([...main.querySelectorAll("details[id][open]")].map((d) => d.id));
    const closed = new Set([...main.querySelectorAll("details[id]:not([open])")].map((d) => d.id));
    for (const d of fresh.querySelectorAll("details[id]")) {
      if (open.has(d.id)) d.open = true;
      if (closed.has(d.id)) d.open = false;
    }
    main.replaceWith(document.adoptNode(fresh));
    version = doc.body.dataset.version || version;
    document.body.dataset.version = version;
    waiting = false;
    notice.hidden = true;
    const paused = document.querySelectorAll("article.run").length;
    live.textContent = location.pathname === "/" ? `Updated: ${paused} ${paused === 1 ? "run awaits" : "runs await"} approval.` : "Updated.";
  };

  // pointerOver: the pointer is over the content, by the last pointer
  // event (:hover too, which the browser keeps when the page changes
  // under a pointer that does not move).
  let pointerOver = false;
  document.addEventListener("pointerover", (ev) => {
    const main = content();
    pointerOver = !!main && main.contains(ev.target);
  });
  const holding = () => {
    const main = content();
    return !!main && (pointerOver || main.matches(":hover")) && main.querySelector("form[method=post]") !== null;
  };

  // waiting: a change was announced and not shown yet.
  let waiting = false;
  const announce = () => {
    const text = location.pathname === "/" ? "The runs awaiting approval changed." : "This page changed.";
    if (!waiting) live.textContent = `${text} The page updates when the pointer leaves it.`;
    waiting = true;
    noticeText.textContent = `${text} It updates when the pointer leaves the list.`;
    notice.hidden = false;
  };
  const showWaiting = () => {
    if (waiting && !holding() && !busy()) refresh().catch(() => {});
  };

  const poll = async () => {
    if (document.hidden || busy() || !version) return;
    try {
      const res = await fetch("/api/version", { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (res.status === 401) {
        location.reload();
        return;
      }
      if (!res.ok) return;
      const { version: now } = await res.json();
      if (!now || now === version) return;
      if (holding()) announce();
      else await refresh();
    } catch {
      // The server is restarting or gone: try again at the next tick.
    }
  };
  setInterval(poll, every);
  document.addEventListener("visibilitychange", poll);
  document.addEventListener("pointerout", (ev) => {
    const main = content();
    if (main && main.contains(ev.target) && !main.contains(ev.relatedTarget)) {
      pointerOver = false;
      showWaiting();
    }
  });
  document.getElementById("notice-show").addEventListener("click", () => refresh().catch(() => {}));

  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    const ask = form.dataset.confirm;
    if (ask && !window.confirm(ask)) {
      ev.preventDefault();
      return;
    }
    if (form.method.toLowerCase() === "post") {
      if (sending) {
        ev.preventDefault();
        return;
      }
      sending = true;
      for (const b of form.querySelectorAll("button")) b.disabled = true;
    }
  });
  // Back from the next page (bfcache): the buttons work again.
  window.addEventListener("pageshow", () => {
    sending = false;
    for (const b of document.querySelectorAll("form button:disabled")) b.disabled = false;
  });
})();
