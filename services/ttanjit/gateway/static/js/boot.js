// Loaded before the client, as a classic script (index.html). A page whose
// code could not all be fetched — the network lost or changed under it: a
// phone between Wi-Fi and mobile data; Chromium fails every request under
// way when a network interface comes or goes — stayed on "불러오는 중…"
// for good. The client's module graph failing fires `error` at its script
// element: the page is loaded again once by itself, and if that fails too
// it says so, with a button. So does a graph that does not link — a module
// of another release (an upgrade under way: the files asked of two
// gateways; one cached from before), which fires a SyntaxError at the
// window before any module runs (version-skew audit: "불러오는 중…" for good).
(() => {
  const KEY = "ttanjit.reloaded"; // when this tab last reloaded itself
  const ONCE_MS = 30_000;
  const lastReload = () => {
    try { return Number(sessionStorage.getItem(KEY) || 0); } catch { return Date.now(); }
  };
  const failed = () => {
    if (Date.now() - lastReload() > ONCE_MS) {
      let kept = true;
      try { sessionStorage.setItem(KEY, String(Date.now())); } catch { kept = false; }
      if (kept) { // (else it could reload for good: say so instead)
        setTimeout(() => location.reload(), 500);
        return;
      }
    }
    const app = document.getElementById("app");
    if (!app) return;
    const say = document.createElement("p");
    say.className = "form-error";
    say.setAttribute("role", "alert");
    say.textContent = "화면을 불러오지 못했어요. 연결을 확인하고 다시 불러와 주세요.";
    const again = document.createElement("button");
    again.type = "button";
    again.className = "primary";
    again.dataset.act = "reload";
    again.textContent = "다시 불러오기";
    again.addEventListener("click", () => location.reload());
    app.replaceChildren(say, again);
  };
  document.addEventListener("error", (ev) => {
    const el = ev.target;
    if (el instanceof HTMLScriptElement && el.type === "module") failed();
  }, true);
  // a module of this origin that does not link, while the client has not
  // started (its lobby, or any screen, replaces "불러오는 중…")
  window.addEventListener("error", (ev) => {
    if (!(ev.error instanceof SyntaxError) || !document.querySelector("#app > p.loading")) return;
    if (!String(ev.filename || "").startsWith(location.origin + "/")) return;
    failed();
  });
})();
