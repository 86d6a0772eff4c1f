// The catalog sidebar's view (an anywidget ES module): a tree of catalogs, branches,
// namespaces, tables and columns; a table's summary, preview and history when picked; buttons
// that insert code into the active notebook cell. Python does every read and every insert.

const POLL_MS = 3000; // commits made elsewhere show within this (the kernel checks cheaply)

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function toggle(label, className, open, fill, onToggle = () => {}) {
  const item = node("li", className);
  const head = node("div", "wb-sb-head");
  const arrow = node("span", "wb-sb-arrow", open ? "▾" : "▸");
  head.append(arrow, node("span", "wb-sb-label", label));
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

// When a panel was opened: its id is "wb-catalog-sidebar-<ns since the epoch, hex>-<random>".
const openedAt = (id) => BigInt(`0x${id.split("-")[3] || "0"}`);

// Close the catalog panels opened before this one (a restarted kernel's, another notebook's),
// through their tabs' close buttons, so one sidebar shows: the newest.
function closeEarlierPanels(own) {
  if (!own || !document.getElementById(own)) return;
  const tabs = document.querySelectorAll('.lm-TabBar-tab[data-id^="wb-catalog-sidebar-"]');
  for (const tab of tabs) {
    if (openedAt(tab.dataset.id) >= openedAt(own)) continue;
    const close = tab.querySelector(".lm-TabBar-tabCloseIcon");
    if (!close) continue;
    // Lumino's tab bar takes a click on a tab's close icon as a press and a release over it.
    const box = tab.getBoundingClientRect();
    const at = { clientX: box.left + box.width / 2, clientY: box.top + box.height / 2 };
    for (const type of ["pointerdown", "pointerup"]) {
      close.dispatchEvent(new PointerEvent(type, { bubbles: true, button: 0, ...at }));
    }
  }
}

function render({ model, el }) {
  el.classList.add("wb-sidebar");
  const header = node("div", "wb-sb-toolbar");
  const refresh = node("button", "wb-sb-refresh jp-mod-styled", "⟳");
  refresh.title = "refresh";
  const filter = node("input", "wb-sb-filter jp-mod-styled");
  filter.placeholder = "filter tables";
  header.append(node("b", "", "Catalog"), filter, refresh);
  // The toolbar stays put; the tree and the picked table's detail scroll each in its own pane,
  // so a table picked far down a long tree has its detail in view.
  const tree = node("ul", "wb-sb-tree");
  const treePane = node("div", "wb-sb-tree-pane");
  treePane.append(tree);
  const detail = node("div", "wb-sb-detail");
  const actions = node("div", "wb-sb-actions");
  const insertHandle = node("button", "wb-sb-insert-handle jp-mod-styled", "insert dc.table(…)");
  const insertSql = node("button", "wb-sb-insert-sql jp-mod-styled", "insert %%dc sql");
  actions.append(insertHandle, insertSql);
  const body = node("div", "wb-sb-body");
  body.append(actions, detail);
  body.hidden = true;
  el.append(header, treePane, body);

  const picked = () => model.get("selected");
  const openTables = new Set(); // tables whose columns are shown, kept across redraws
  const key = (c, b, t) => `${c}/${b}/${t}`;

  function columnsOf(children, catalog, branch, table) {
    const found = model.get("columns")[key(catalog, branch, table)];
    if (!found) {
      model.send({ kind: "expand", catalog, branch, table });
      children.append(node("li", "wb-sb-loading", "…"));
      return;
    }
    for (const [name, type, isKey] of found) {
      const row = node("li", "wb-sb-column");
      row.append(node("span", "wb-sb-column-name", name), node("span", "wb-sb-type", type));
      if (isKey) row.append(node("span", "wb-sb-key", "key"));
      children.append(row);
    }
  }

  function tableItem(catalog, branch, qualified) {
    const table = qualified.split(".").slice(1).join(".");
    const path = key(catalog, branch, qualified);
    const item = toggle(
      table,
      "wb-sb-table",
      openTables.has(path),
      (children) => columnsOf(children, catalog, branch, qualified),
      (opened) => (opened ? openTables.add(path) : openTables.delete(path)),
    );
    item.dataset.table = qualified;
    const label = item.querySelector(".wb-sb-label");
    const current = picked();
    if (current && current.catalog === catalog && current.branch === branch
        && current.table === qualified) {
      label.classList.add("wb-sb-picked");
    }
    label.addEventListener("click", (event) => {
      event.stopPropagation();
      model.send({ kind: "select", catalog, branch, table: qualified });
    });
    return item;
  }

  function draw() {
    const text = filter.value.toLowerCase();
    const open = new Set(
      [...tree.querySelectorAll(".wb-sb-children:not([hidden])")].map((c) => c.dataset.path),
    );
    tree.replaceChildren();
    for (const catalog of model.get("tree")) {
      const catalogItem = toggle(catalog.catalog, "wb-sb-catalog", true, (branches) => {
        if (catalog.error) branches.append(node("li", "wb-sb-error", catalog.error));
        for (const branch of catalog.branches) {
          const path = `${catalog.catalog}/${branch.branch}`;
          const opened = branch.current || open.has(path);
          const label = branch.branch + (branch.current ? " (in use)" : "");
          const branchItem = toggle(label, "wb-sb-branch", opened, (namespaces) => {
            const current = picked();
            for (const [namespace, tables] of Object.entries(branch.namespaces)) {
              const shown = tables.filter((t) => t.toLowerCase().includes(text));
              if (text && !shown.length) continue;
              const nsPath = `${path}/${namespace}`;
              // Collapsed unless opened, filtered for, or holding the picked table.
              const holdsPicked = current && current.catalog === catalog.catalog
                && current.branch === branch.branch && tables.includes(current.table);
              const nsOpen = Boolean(text) || open.has(nsPath) || Boolean(holdsPicked);
              const label = `${namespace} (${text ? `${shown.length}/` : ""}${tables.length})`;
              const nsItem = toggle(label, "wb-sb-namespace", nsOpen, (list) => {
                for (const t of shown) list.append(tableItem(catalog.catalog, branch.branch, t));
              });
              nsItem.dataset.namespace = namespace;
              nsItem.querySelector(".wb-sb-children").dataset.path = nsPath;
              namespaces.append(nsItem);
            }
          });
          branchItem.querySelector(".wb-sb-children").dataset.path = path;
          branches.append(branchItem);
        }
      });
      tree.append(catalogItem);
    }
  }

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
  const insert = (what) => model.send({ kind: "insert", what, empty: activeCellEmpty() });
  insertHandle.addEventListener("click", () => insert("handle"));
  insertSql.addEventListener("click", () => insert("sql"));
  refresh.addEventListener("click", () => model.send({ kind: "refresh" }));
  filter.addEventListener("input", draw);
  model.on("change:tree", draw);
  model.on("change:columns", draw);
  model.on("change:selected", draw);
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
    if (message.kind !== "alive") return;
    heard = Date.now();
    markStopped(false);
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
  return () => {  // the model is gone (its kernel restarted or stopped); the panel may stay
    clearInterval(poll);
    clearInterval(replaced);
    markStopped(true);
  };
}

export default { render };
