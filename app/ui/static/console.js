// Times in the viewer's own time zone: the server writes UTC (<time datetime="…">, data-time on chart ticks),
// which stays as it is without scripts; with them, each time reads in the browser's zone, with "3 min ago"
// next to recent ones.
const Times = (() => {
  const pad = (n) => String(n).padStart(2, "0");
  const RELATIVE_UNTIL = 7 * 86400 * 1000; // older times are read as dates, not as "12 days ago"
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "short" });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

  function local(d, seconds) {
    const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}` + (seconds ? `:${pad(d.getSeconds())}` : "");
    return `${day} ${time}`;
  }
  function ago(d, now) {
    const ms = d.getTime() - now;
    if (Math.abs(ms) > RELATIVE_UNTIL) return "";
    const s = Math.round(ms / 1000);
    if (Math.abs(s) < 45) return s <= 0 ? "just now" : relative.format(s, "second");
    const m = Math.round(s / 60);
    if (Math.abs(m) < 60) return relative.format(m, "minute");
    const h = Math.round(m / 60);
    if (Math.abs(h) < 24) return relative.format(h, "hour");
    return relative.format(Math.round(h / 24), "day");
  }
  function text(iso, now = Date.now()) {
    const d = new Date(iso);
    if (isNaN(d)) return iso;
    const rel = ago(d, now);
    return local(d, true) + (rel ? ` (${rel})` : "");
  }
  function render(root) {
    const now = Date.now();
    root.querySelectorAll("time[datetime]").forEach((el) => {
      el.textContent = text(el.getAttribute("datetime"), now);
      el.title = `${el.getAttribute("datetime")} (UTC) · shown in ${zone}`;
    });
    // Chart axes: hours and minutes (with the date on ranges over two days) in the viewer's zone.
    root.querySelectorAll("text.x-tick[data-time]").forEach((el) => {
      const d = new Date(el.dataset.time);
      if (isNaN(d)) return;
      const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
      el.textContent = Number(el.dataset.span) > 2 * 86400 ? `${local(d, false).slice(5, 10)} ${clock}` : clock;
    });
    root.querySelectorAll(".time-zone").forEach((el) => { el.textContent = zone; });
  }
  return { text, render };
})();
document.addEventListener("DOMContentLoaded", () => Times.render(document));

// Tooltips for chart markers: the marker's title (every title of a cluster), type and time, on hover or keyboard
// focus; kept inside the chart's card, so a marker at the right edge opens its tooltip to the left.
(function () {
  const tip = document.createElement("div");
  tip.id = "tooltip";
  tip.hidden = true;
  tip.setAttribute("role", "tooltip");
  document.addEventListener("DOMContentLoaded", () => document.body.appendChild(tip));
  const GAP = 12;

  function place(marker, x, y) {
    const box = (marker.closest(".card") || document.body).getBoundingClientRect();
    const right = Math.min(box.right, document.documentElement.clientWidth);
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let left = x + GAP;
    if (left + w > right) left = Math.max(box.left, x - GAP - w);
    let top = y + GAP;
    if (top + h > window.innerHeight) top = Math.max(0, y - GAP - h);
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }
  function show(marker, x, y) {
    const d = marker.dataset;
    const end = d.endTime ? " → " + Times.text(d.endTime) : "";
    tip.textContent = "";
    const title = document.createElement("strong");
    title.textContent = d.title;
    tip.append(title);
    if (d.titles) {
      const list = document.createElement("ul");
      d.titles.split("\n").forEach((t) => { const li = document.createElement("li"); li.textContent = t; list.append(li); });
      tip.append(list);
    }
    const meta = document.createElement("div");
    meta.textContent = d.type + " · " + Times.text(d.time) + end;
    tip.append(meta);
    tip.hidden = false;
    place(marker, x, y);
  }
  function hide() { tip.hidden = true; }

  document.addEventListener("mouseover", (e) => {
    const marker = e.target.closest && e.target.closest(".ann-marker");
    if (marker) show(marker, e.clientX, e.clientY);
  });
  document.addEventListener("mouseout", (e) => {
    const marker = e.target.closest && e.target.closest(".ann-marker");
    if (marker && !marker.contains(e.relatedTarget)) hide();
  });
  document.addEventListener("focusin", (e) => {
    const marker = e.target.closest && e.target.closest(".ann-marker");
    if (marker) { const r = marker.getBoundingClientRect(); show(marker, r.left, r.top); }
  });
  document.addEventListener("focusout", hide);
})();

// The range form: choosing a preset clears the explicit bounds (which would win over it); typing a bound
// switches the preset selector to "custom".
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form.controls");
  if (!form) return;
  const preset = form.elements.namedItem("range");
  const bounds = [form.elements.namedItem("start"), form.elements.namedItem("end")];
  if (!preset || !bounds[0] || !bounds[1]) return;
  preset.addEventListener("change", () => { if (preset.value) bounds.forEach((b) => { b.value = ""; }); });
  bounds.forEach((b) => b.addEventListener("input", () => { preset.value = ""; }));
});
