// Tooltips for annotation markers: the marker's title, type and time, shown on hover or keyboard focus.
(function () {
  const tip = document.createElement("div");
  tip.id = "tooltip";
  tip.hidden = true;
  tip.setAttribute("role", "tooltip");
  document.addEventListener("DOMContentLoaded", () => document.body.appendChild(tip));

  function show(marker, x, y) {
    const end = marker.dataset.endTime ? " → " + marker.dataset.endTime : "";
    tip.textContent = "";
    const title = document.createElement("strong");
    title.textContent = marker.dataset.title;
    const meta = document.createElement("div");
    meta.textContent = marker.dataset.type + " · " + marker.dataset.time + end;
    tip.append(title, meta);
    tip.style.left = x + 12 + "px";
    tip.style.top = y + 12 + "px";
    tip.hidden = false;
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
  preset.addEventListener("change", () => { if (preset.value) bounds.forEach((b) => { b.value = ""; }); });
  bounds.forEach((b) => b.addEventListener("input", () => { preset.value = ""; }));
});
