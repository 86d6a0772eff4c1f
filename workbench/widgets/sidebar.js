// The catalog sidebar's view (an anywidget ES module): a tree of catalogs, branches,
// namespaces, tables (rows, size) and columns; a table's summary, preview and history when
// picked; a table's context menu, drag into a cell, and buttons that insert code into the active
// notebook cell. Python does every read and every insert; JupyterLab's theme does the look.

const POLL_MS = 3000; // commits made elsewhere show within this (the kernel checks cheaply)
const RETRY_MS = 400; // a line's outlines still being read: ask again after this
const FILTER_MS = 150; // typing pauses this long before the columns are searched
const CHUNK = 200; // tables drawn at once in a namespace; a "more" row draws the next ones
const WIDE_PX = 400; // the left area's width when the sidebar opens in a narrower one

// Small icons (24-unit paths) drawn in the theme's colours by sidebar.css.
const ICONS = {
  catalog: "M12 2C7.6 2 4 3.3 4 5v14c0 1.7 3.6 3 8 3s8-1.3 8-3V5c0-1.7-3.6-3-8-3zm0 2c3.9 0 6 1.1 6 1.5S15.9 7 12 7 6 5.9 6 5.5 8.1 4 12 4zM6 7.9C7.5 8.6 9.6 9 12 9s4.5-.4 6-1.1V12c0 .4-2.1 1.5-6 1.5S6 12.4 6 12zm0 6.5c1.5.7 3.6 1.1 6 1.1s4.5-.4 6-1.1v4.1c0 .4-2.1 1.5-6 1.5s-6-1.1-6-1.5z",
  branch: "M7 3a3 3 0 0 0-1 5.8v6.4A3 3 0 1 0 8 15.2V14c0-1.1.9-2 2-2h4a4 4 0 0 0 4-4v-.2a3 3 0 1 0-2 0V8c0 1.1-.9 2-2 2h-4c-.7 0-1.4.2-2 .5V8.8A3 3 0 0 0 7 3z",
  namespace: "M3 5c0-1.1.9-2 2-2h5l2 2h7c1.1 0 2 .9 2 2v11c0 1.1-.9 2-2 2H5c-1.1 0-2-.9-2-2z",
  table: "M3 4h18v16H3zm2 2v3h6V6zm8 0v3h6V6zm-8 5v3h6v-3zm8 0v3h6v-3zm-8 5v2h6v-2zm8 0v2h6v-2z",
  column: "M9 3h6v18H9zm2 2v14h2V5z",
  refresh: "M17.7 6.3A8 8 0 1 0 20 12h-2a6 6 0 1 1-1.8-4.2L13 11h7V4z",
};

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function icon(kind) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `wb-sb-icon wb-sb-icon-${kind}`);
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[kind]);
  svg.append(path);
  return svg;
}

function toggle(label, kind, open, fill, onToggle = () => {}) {
  const item = node("li", `wb-sb-${kind}`);
  const head = node("div", "wb-sb-head");
  const arrow = node("span", "wb-sb-arrow", open ? "▾" : "▸");
  head.append(arrow, icon(kind), node("span", "wb-sb-label", label));
  const children = node("ul", "wb-sb-children");
  children.hidden = !open;
  if (open) fill(children);
  head.addEventListener("click", () => {
    children.hidden = !children.hidden;
    arrow.textContent = children.hidden ? "▸" : "▾";
    if (!children.hidden && !children.childElementCount) fill(children);
    onToggle(!children.hidden);
  });
  item.append(head, children);
  return item;
}

// A byte count as text: 1.2 kB, 3.4 MB.
function bytes(n) {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// When a panel was opened: its id is "wb-catalog-sidebar-<ns since the epoch, hex>-<random>".
const openedAt = (id) => BigInt(`0x${id.split("-")[3] || "0"}`);

// Lumino widgets take a press and a release (its tab bar, its split panel's handles): a drag
// on ``target`` from (x, y) to (x + dx, y), as a user's pointer makes it (the events bubble to
// the document, where Lumino follows a drag).
function drag(target, x, y, dx = 0) {
  const at = (clientX) => ({ bubbles: true, button: 0, clientX, clientY: y });
  target.dispatchEvent(new PointerEvent("pointerdown", at(x)));
  if (dx) target.dispatchEvent(new PointerEvent("pointermove", at(x + dx)));
  target.dispatchEvent(new PointerEvent("pointerup", at(x + dx)));
}

// Close the catalog panels opened before this one (a restarted kernel's, another notebook's),
// through their tabs' close buttons, so one sidebar shows: the newest.
function closeEarlierPanels(own) {
  if (!own || !document.getElementById(own)) return;
  const tabs = document.querySelectorAll('.lm-TabBar-tab[data-id^="wb-catalog-sidebar-"]');
  for (const tab of tabs) {
    if (openedAt(tab.dataset.id) >= openedAt(own)) continue;
    const close = tab.querySelector(".lm-TabBar-tabCloseIcon");
    if (!close) continue;
    const box = tab.getBoundingClientRect();
    drag(close, box.left + box.width / 2, box.top + box.height / 2);
  }
}

// Widen JupyterLab's left area to WIDE_PX when it is narrower, by dragging the handle between
// it and the main area (Lumino sizes its panels itself and ignores CSS min-width; JupyterLab
// keeps the new width in its layout, and the user can drag it back). True once done or not
// needed; false while the panel is not laid out yet.
function widenLeftArea(el) {
  const area = el.closest(".jp-SideArea"); // the left area: its stack of panels and its title
  if (!area || !area.offsetWidth) return false;
  const width = area.getBoundingClientRect().width;
  if (width >= WIDE_PX) return true;
  const handle = area.nextElementSibling;
  if (!handle || !handle.classList.contains("lm-SplitPanel-handle")) return true;
  const box = handle.getBoundingClientRect();
  drag(handle, box.left + box.width / 2, box.top + box.height / 2, WIDE_PX - width);
  return true;
}

function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).catch(() => copyByCommand(text));
  } else {
    copyByCommand(text);
  }
}

function copyByCommand(text) {
  const area = node("textarea");
  area.value = text;
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

function render({ model, el }) {
  el.classList.add("wb-sidebar");
  const header = node("div", "wb-sb-toolbar");
  const refresh = node("button", "wb-sb-refresh jp-Button jp-mod-minimal jp-mod-styled");
  refresh.append(icon("refresh"));
  refresh.title = "refresh";
  const search = node("div", "wb-sb-search jp-InputGroup");
  const filter = node("input", "wb-sb-filter");
  filter.placeholder = "filter tables and columns";
  filter.spellcheck = false;
  search.append(filter);
  header.append(search, refresh);
  // The toolbar stays put; the tree and the picked table's detail scroll each in its own pane,
  // so a table picked far down a long tree has its detail in view.
  const tree = node("ul", "wb-sb-tree");
  const treePane = node("div", "wb-sb-tree-pane");
  treePane.append(tree);
  const detail = node("div", "wb-sb-detail");
  const actions = node("div", "wb-sb-actions");
  const insertHandle = node("button", "wb-sb-insert-handle jp-Button jp-mod-styled jp-mod-accept",
    "insert dc.table(…)");
  const insertSql = node("button", "wb-sb-insert-sql jp-Button jp-mod-styled jp-mod-reject",
    "insert %%dc sql");
  actions.append(insertHandle, insertSql);
  const body = node("div", "wb-sb-body");
  body.append(actions, detail);
  body.hidden = true;
  el.append(header, treePane, body);

  const picked = () => model.get("selected");
  const openTables = new Set(); // tables whose columns are shown, kept across redraws
  const shownIn = new Map(); // namespace path -> how many of its tables are drawn
  const key = (c, b, t) => `${c}/${b}/${t}`;
  let matches = {}; // "catalog/branch" -> {"ns.t": [columns whose names hold the filter]}
  let matchedText = "";
  const asking = new Set(); // lines whose outlines were asked for and not answered yet

  // Ask Python for the sizes of the tables in a line's open namespaces (its ``list`` of them,
  // a branch's children) or, with a filter, of every table and the columns matching the filter.
  function askOutline(catalog, branch, list) {
    const open = list.querySelectorAll(":scope > li > .wb-sb-children:not([hidden])");
    const namespaces = [...open].map((children) => children.parentElement.dataset.namespace);
    sendOutline(catalog, branch, filter.value ? null : namespaces);
  }
  function sendOutline(catalog, branch, namespaces) {
    const line = `${catalog}/${branch}`;
    if (asking.has(line)) return;
    asking.add(line);
    model.send({ kind: "outline", catalog, branch, namespaces, text: filter.value });
  }

  // The name a drag or "copy name" gives: ns.t, or catalog.ns.t outside the default catalog.
  function sqlName(catalog, qualified) {
    const entry = model.get("tree").find((c) => c.catalog === catalog);
    return entry && entry.default ? qualified : `${catalog}.${qualified}`;
  }

  function columnsOf(children, catalog, branch, table) {
    const found = model.get("columns")[key(catalog, branch, table)];
    if (!found) {
      model.send({ kind: "expand", catalog, branch, table });
      children.append(node("li", "wb-sb-loading", "…"));
      return;
    }
    const text = filter.value.toLowerCase();
    for (const [name, type, isKey] of found) {
      const row = node("li", "wb-sb-column");
      const label = node("span", "wb-sb-column-name", name);
      if (text && name.toLowerCase().includes(text)) label.classList.add("wb-sb-hit");
      row.append(icon("column"), label, node("span", "wb-sb-type", type));
      if (isKey) row.append(node("span", "wb-sb-key", "key"));
      children.append(row);
    }
  }

  function tableItem(catalog, branch, qualified, matched) {
    const table = qualified.split(".").slice(1).join(".");
    const path = key(catalog, branch, qualified);
    const item = toggle(
      table,
      "table",
      openTables.has(path),
      (children) => columnsOf(children, catalog, branch, qualified),
      (opened) => (opened ? openTables.add(path) : openTables.delete(path)),
    );
    item.dataset.table = qualified;
    const head = item.querySelector(".wb-sb-head");
    const stats = (model.get("stats")[`${catalog}/${branch}`] || {})[qualified];
    if (stats) {
      const [rows, size] = stats;
      const text = `${rows.toLocaleString()} row${rows === 1 ? "" : "s"} · ${bytes(size)}`;
      head.append(node("span", "wb-sb-stats", text));
    }
    if (matched && matched.length) {
      const hit = node("div", "wb-sb-match");
      hit.append(icon("column"), node("span", "", matched.join(", ")));
      head.after(hit);
    }
    const label = item.querySelector(".wb-sb-label");
    const current = picked();
    if (current && current.catalog === catalog && current.branch === branch
        && current.table === qualified) {
      head.classList.add("wb-sb-picked");
    }
    label.addEventListener("click", (event) => {
      event.stopPropagation();
      model.send({ kind: "select", catalog, branch, table: qualified });
    });
    const target = { catalog, branch, table: qualified };
    head.draggable = true;  // into a cell: CodeMirror inserts the dropped text at the drop
    head.addEventListener("dragstart", (event) => {
      event.dataTransfer.setData("text/plain", sqlName(catalog, qualified));
      event.dataTransfer.effectAllowed = "copy";
    });
    head.addEventListener("contextmenu", (event) => {
      event.preventDefault();
      event.stopPropagation();  // JupyterLab's own context menu stays shut
      openMenu(event.clientX, event.clientY, target);
    });
    return item;
  }

  // A namespace's tables, CHUNK at a time: thousands of tables draw as fast as a few.
  function fillTables(list, nsPath, catalog, branch, tables, lineMatches) {
    const upTo = Math.max(shownIn.get(nsPath) || 0, CHUNK);
    for (const t of tables.slice(0, upTo)) {
      list.append(tableItem(catalog, branch, t, lineMatches[t]));
    }
    if (tables.length <= upTo) return;
    const more = node("li", "wb-sb-more", `${tables.length - upTo} more…`);
    more.addEventListener("click", () => {
      shownIn.set(nsPath, upTo + CHUNK);
      list.replaceChildren();
      fillTables(list, nsPath, catalog, branch, tables, lineMatches);
    });
    list.append(more);
  }

  function draw() {
    const text = filter.value.toLowerCase();
    const open = new Set(
      [...tree.querySelectorAll(".wb-sb-children:not([hidden])")].map((c) => c.dataset.path),
    );
    const scroll = treePane.scrollTop;
    tree.replaceChildren();
    for (const catalog of model.get("tree")) {
      const catalogItem = toggle(catalog.catalog, "catalog", true, (branches) => {
        if (catalog.error) branches.append(node("li", "wb-sb-error", catalog.error));
        for (const branch of catalog.branches) {
          const path = `${catalog.catalog}/${branch.branch}`;
          const opened = branch.current || open.has(path);
          const lineMatches = text === matchedText ? matches[path] || {} : {};
          const label = branch.branch + (branch.current ? " (in use)" : "");
          const branchItem = toggle(label, "branch", opened, (namespaces) => {
            const current = picked();
            let anyOpen = Boolean(text);
            for (const [namespace, tables] of Object.entries(branch.namespaces)) {
              const shown = text
                ? tables.filter((t) => t.toLowerCase().includes(text) || t in lineMatches)
                : tables;
              if (text && !shown.length) continue;
              const nsPath = `${path}/${namespace}`;
              // Collapsed unless opened, filtered for, or holding the picked table.
              const holdsPicked = current && current.catalog === catalog.catalog
                && current.branch === branch.branch && tables.includes(current.table);
              const nsOpen = Boolean(text) || open.has(nsPath) || Boolean(holdsPicked);
              anyOpen = anyOpen || nsOpen;
              const label = `${namespace} (${text ? `${shown.length}/` : ""}${tables.length})`;
              const nsItem = toggle(label, "namespace", nsOpen, (list) => {
                fillTables(list, nsPath, catalog.catalog, branch.branch, shown, lineMatches);
              }, (now) => now && askOutline(catalog.catalog, branch.branch, namespaces));
              nsItem.dataset.namespace = namespace;
              nsItem.querySelector(".wb-sb-children").dataset.path = nsPath;
              namespaces.append(nsItem);
            }
            if (anyOpen) askOutline(catalog.catalog, branch.branch, namespaces);
          });
          branchItem.querySelector(".wb-sb-children").dataset.path = path;
          branches.append(branchItem);
        }
      });
      tree.append(catalogItem);
    }
    treePane.scrollTop = scroll;
  }

  // The context menu of a table row, in JupyterLab's menu classes (so its theme draws it).
  let menu = null;
  const closeMenu = () => {
    if (menu) menu.remove();
    menu = null;
  };
  function openMenu(x, y, target) {
    closeMenu();
    const name = sqlName(target.catalog, target.table);
    const entries = [
      ["copy", `Copy name (${name})`, () => copyText(name)],
      ["preview", "Preview", () => model.send({ kind: "select", ...target })],
      ["history", "History", () => model.send({ kind: "history", ...target })],
      ["insert-handle", "Insert dc.table(…)", () => insert("handle", target)],
      ["insert-sql", "Insert %%dc sql", () => insert("sql", target)],
    ];
    menu = node("div", "lm-Menu wb-sb-menu");
    const list = node("ul", "lm-Menu-content");
    for (const [what, label, act] of entries) {
      const item = node("li", "lm-Menu-item");
      item.dataset.action = what;
      item.append(node("div", "lm-Menu-itemIcon"), node("div", "lm-Menu-itemLabel", label));
      item.addEventListener("mouseenter", () => item.classList.add("lm-mod-active"));
      item.addEventListener("mouseleave", () => item.classList.remove("lm-mod-active"));
      item.addEventListener("pointerdown", (event) => event.stopPropagation());
      item.addEventListener("click", (event) => {
        event.stopPropagation();
        closeMenu();
        act();
      });
      list.append(item);
    }
    menu.append(list);
    document.body.append(menu);
    const box = menu.getBoundingClientRect(); // kept inside the window near its edges
    menu.style.left = `${Math.max(0, Math.min(x, window.innerWidth - box.width))}px`;
    menu.style.top = `${Math.max(0, Math.min(y, window.innerHeight - box.height))}px`;
  }
  const onOutside = (event) => {
    if (menu && !menu.contains(event.target)) closeMenu();
  };
  const onKey = (event) => event.key === "Escape" && closeMenu();
  document.addEventListener("pointerdown", onOutside, true);
  document.addEventListener("keydown", onKey, true);

  function drawDetail() {
    detail.innerHTML = model.get("detail");
    body.hidden = !picked();
  }

  // Whether the active cell of the notebook in view holds any text: a %%dc sql snippet goes
  // into it only when it is empty (a cell magic must open its cell), else into a new cell.
  function activeCellEmpty() {
    const active = document.querySelector(
      ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active .cm-content",
    );
    return active !== null && active.textContent.trim() === "";
  }
  const insert = (what, target) =>
    model.send({ kind: "insert", what, target, empty: activeCellEmpty() });
  insertHandle.addEventListener("click", () => insert("handle"));
  insertSql.addEventListener("click", () => insert("sql"));
  refresh.addEventListener("click", () => model.send({ kind: "refresh" }));
  let typing = null;
  filter.addEventListener("input", () => {
    draw();  // table names at once; the columns when the typing pauses
    clearTimeout(typing);
    typing = setTimeout(() => {
      asking.clear();
      draw();
    }, FILTER_MS);
  });
  // A redraw while a button is held on the tree would split a click across two trees (the
  // press on one, the release on the next) and lose it: an update waits for the release.
  let held = false;
  let waiting = false;
  tree.addEventListener("pointerdown", () => { held = true; });
  const onRelease = () => {
    held = false;
    if (waiting) {
      waiting = false;
      setTimeout(draw, 0); // after the click this release makes
    }
  };
  const releases = ["pointerup", "pointercancel", "dragend"]; // a drag into a cell cancels
  for (const kind of releases) document.addEventListener(kind, onRelease, true);
  const redraw = () => {
    if (held) waiting = true;
    else draw();
  };
  model.on("change:tree", redraw);
  model.on("change:columns", redraw);
  model.on("change:stats", redraw);
  model.on("change:selected", redraw);
  model.on("change:detail", drawDetail);
  draw();
  drawDetail();
  // A kernel that answers no poll has stopped (restarted, shut down): say so, and how to get a
  // live sidebar. A new kernel's sidebar closes this one when it opens.
  const stale = node("div", "wb-sb-stale",
    "This sidebar's kernel stopped. Run %dc sidebar in a notebook for a live one.");
  stale.hidden = true;
  header.after(stale);
  const markStopped = (stopped) => {
    stale.hidden = !stopped;
    el.classList.toggle("wb-sb-dead", stopped);
  };
  let heard = Date.now();
  model.on("msg:custom", (message) => {
    if (message.kind === "alive") {
      heard = Date.now();
      markStopped(false);
    } else if (message.kind === "outline") {
      const { catalog, branch } = message;
      const line = `${catalog}/${branch}`;
      if (message.pending) {
        setTimeout(() => {
          asking.delete(line);
          sendOutline(catalog, branch, filter.value ? null : message.namespaces);
        }, RETRY_MS);
        return;
      }
      asking.delete(line);
      if (message.text !== filter.value) return; // a newer filter's answer is on its way
      const text = message.text.toLowerCase();
      const before = text === matchedText ? JSON.stringify(matches[line] || {}) : "";
      if (text !== matchedText) matches = {};
      matchedText = text;
      matches[line] = message.matches;
      if (text && JSON.stringify(message.matches) !== before) draw();
    }
  });
  const poll = setInterval(() => {
    if (Date.now() - heard > 2.5 * POLL_MS) markStopped(true);
    try {
      model.send({ kind: "poll" });
    } catch {
      markStopped(true); // its comm closed with the kernel
    }
  }, POLL_MS);
  const replaced = setInterval(() => closeEarlierPanels(model.get("panel_id")), 500);
  setTimeout(() => clearInterval(replaced), 10 * POLL_MS);
  const widen = setInterval(() => widenLeftArea(el) && clearInterval(widen), 100);
  setTimeout(() => clearInterval(widen), 10 * POLL_MS);
  return () => {  // the model is gone (its kernel restarted or stopped); the panel may stay
    clearInterval(poll);
    clearInterval(replaced);
    clearInterval(widen);
    document.removeEventListener("pointerdown", onOutside, true);
    for (const kind of releases) document.removeEventListener(kind, onRelease, true);
    document.removeEventListener("keydown", onKey, true);
    closeMenu();
    markStopped(true);
  };
}

export default { render };
