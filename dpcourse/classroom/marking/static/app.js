// The marking page: apply rubric items (keys 1-9), keep the points adding up, save with the version read
// (a conflicting save is refused by the server and its message shown), edit and add rubric items.
"use strict";
(function () {
  const page = document.getElementById("question");
  if (!page || !page.dataset.group) return;
  const xsrf = document.querySelector('meta[name="xsrf"]').content;
  const base = document.querySelector('meta[name="base"]').content;
  const exercise = page.dataset.exercise;
  const maximum = Number(page.dataset.max);
  const status = document.getElementById("status");
  const conflict = document.getElementById("conflict");
  const items = Array.from(document.querySelectorAll("#items .item"));

  async function post(path, body) {
    const response = await fetch(base + path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-XSRFToken": xsrf },
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (error) { data = { error: response.statusText }; }
    return { ok: response.ok, status: response.status, data: data };
  }

  function refuse(message) {
    conflict.textContent = message;
    conflict.hidden = false;
  }

  function total() {
    let raw = Number(document.getElementById("adjustment").value || 0);
    for (const item of items) if (item.querySelector(".apply").checked) raw += Number(item.dataset.points);
    const points = Math.min(Math.max(raw, 0), maximum);
    document.getElementById("total").textContent = String(Math.round(points * 1000) / 1000);
    document.getElementById("raw").textContent = raw === points ? "" : "(items add up to " + raw + ", clamped to [0, " + maximum + "])";
  }

  async function save() {
    total();
    const body = {
      exercise: exercise,
      group: page.dataset.group,
      items: items.filter((item) => item.querySelector(".apply").checked).map((item) => item.dataset.item),
      comment: document.getElementById("comment").value,
      adjustment: Number(document.getElementById("adjustment").value || 0),
      version: Number(page.dataset.version),
    };
    status.textContent = "Saving…";
    const result = await post("api/mark", body);
    if (result.ok) {
      page.dataset.version = String(result.data.version);
      status.textContent = "Saved by " + result.data.marked_by + " (version " + result.data.version + ")";
      document.getElementById("progress").textContent = result.data.progress;
      conflict.hidden = true;
    } else {
      status.textContent = "Not saved";
      refuse(result.data.error || "the save was refused");
    }
  }

  items.forEach((item) => {
    item.querySelector(".apply").addEventListener("change", save);
    item.querySelector(".edit").addEventListener("click", () => {
      const form = item.querySelector(".edit-form");
      form.hidden = !form.hidden;
    });
    item.querySelector(".edit-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = await post("api/item", {
        exercise: exercise,
        item: item.dataset.item,
        text: item.querySelector(".edit-text").value,
        points: item.querySelector(".edit-points").value,
        version: Number(item.dataset.version),
      });
      if (result.ok) window.location.reload();
      else refuse(result.data.error || "the edit was refused");
    });
  });
  document.getElementById("add-item").addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await post("api/item/add", {
      exercise: exercise,
      text: document.getElementById("add-text").value,
      points: document.getElementById("add-points").value,
    });
    if (result.ok) window.location.reload();
    else refuse(result.data.error || "the item was refused");
  });
  document.getElementById("save").addEventListener("click", save);
  document.getElementById("adjustment").addEventListener("change", save);
  total();

  function go(id) {
    const link = document.getElementById(id);
    if (link) window.location.href = link.href;
  }

  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
    if (event.key === "Escape" && typing) { event.target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-9]$/.test(event.key)) {
      const item = items[Number(event.key) - 1];
      if (!item) return;
      const box = item.querySelector(".apply");
      box.checked = !box.checked;
      event.preventDefault();
      save();
    } else if (event.key === "j" || event.key === "ArrowRight") {
      go("next");
    } else if (event.key === "k" || event.key === "ArrowLeft") {
      go("previous");
    } else if (event.key === "s") {
      event.preventDefault();
      save();
    } else if (event.key === "c") {
      event.preventDefault();
      document.getElementById("comment").focus();
    }
  });
})();
