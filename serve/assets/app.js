// dtb tablebase explorer: draws the board from /api/v1/variants, asks /api/v1/{variant}
// for the position, plays moves by clicking (from square, then to square), steps through
// the best line, sets a position up by clicking squares with a piece chosen from a palette,
// turns the board round, and steps through a pasted PDN game analysed by
// POST /api/v1/{variant}/analyze, the moves that changed the result marked. With DTC tables
// it shows values under the count rule at a counter the user sets (playing a move counts on,
// or back to 0 after a capture or man move), cursed wins and blessed losses coloured apart.
// The URL (?variant=&fen=&counter=) holds the position, so a link shares it.
"use strict";

const SIZE = 480; // board side in SVG units
const SVG = "http://www.w3.org/2000/svg";

const state = {
  variants: new Map(), // name -> {name, board, squares: Map(number -> {row, col}), example}
  variant: null,
  fen: null,
  data: null, // the API's answer for the position shown
  selected: null, // square number of the piece picked up
  lastMove: null, // the move that led here, to mark on the board
  line: null, // {fens: [...], steps: [...], index}: the best line being stepped through
  flipped: false, // Black's side at the bottom
  setup: null, // while setting a position up: {side, pieces: Map(number -> {color, king})}
  put: "wm", // the palette's choice: empty, wm, wk, bm, bk
  game: null, // {fens: [...], plies: [...], index}: the pasted game being stepped through
  counter: 0, // plies since the count rule's counter was last reset (with DTC tables)
};

const $ = (id) => document.getElementById(id);

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "error" : "";
}

// PDN FEN "W:W18,K27:B3,K12" (ranges "1-4" allowed) or with algebraic squares
// "W:Wc3,Ke5:Bf6" -> {side, pieces: Map(number -> {color, king})}, squares of variant `v`.
function parseFen(fen, v) {
  const fields = fen.trim().split(":");
  const pieces = new Map();
  const side = (fields[0] || "").trim().toUpperCase() === "B" ? "black" : "white";
  for (const field of fields.slice(1)) {
    const f = field.trim();
    if (!f) continue;
    const color = f[0].toUpperCase() === "B" ? "black" : "white";
    for (let tok of f.slice(1).split(",")) {
      tok = tok.trim();
      if (!tok) continue;
      let king = false;
      if (tok[0].toUpperCase() === "K") {
        king = true;
        tok = tok.slice(1);
      }
      if (/^[a-z][0-9]+$/i.test(tok)) {
        const num = v.names.get(tok.toLowerCase());
        if (num !== undefined) pieces.set(num, { color, king });
        continue;
      }
      const range = tok.split("-");
      const a = parseInt(range[0], 10);
      const b = range.length > 1 ? parseInt(range[1], 10) : a;
      if (Number.isNaN(a) || Number.isNaN(b)) continue;
      for (let n = a; n <= b && n - a < 64; n++) pieces.set(n, { color, king });
    }
  }
  return { side, pieces };
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Moves of the position shown that start on square `from`.
function movesFrom(from) {
  return state.data && state.data.moves ? state.data.moves.filter((m) => m.from === from) : [];
}

// The variant shown.
function current() {
  return state.variants.get(state.variant);
}

// A square as the variant's players name it: "c3" (algebraic variants) or its number.
function squareName(v, num) {
  return v.notation === "algebraic" ? v.squares.get(num).name : String(num);
}

// The board of the position shown, drawn from the server's FEN only: where the API refused
// the position (a bad FEN, no table), no board, only the error in the status line. While a
// position is set up, the board is the one being set up, whatever the server says of it.
// Algebraic variants get files a-h and ranks 1-8 along the board's edges, the others each
// square's number; flipped, Black's side is at the bottom.
function drawBoard() {
  const v = current();
  const box = $("board");
  box.textContent = "";
  document.body.dataset.flipped = String(state.flipped);
  if (!v) return;
  const position = state.setup || (state.data ? parseFen(state.data.fen, v) : gamePosition(v));
  if (!position) return;
  const n = v.board;
  const cell = SIZE / n;
  // Screen row and column of a board row and column.
  const at = (row, col) => (state.flipped ? [n - 1 - row, n - 1 - col] : [row, col]);
  const svg = el("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, role: "img" }, box);
  const dark = new Map(); // "row,col" -> number
  for (const [num, sq] of v.squares) dark.set(`${sq.row},${sq.col}`, num);
  const targets = new Set(state.selected === null ? [] : movesFrom(state.selected).map((m) => m.to));
  const last = new Set(state.lastMove ? [state.lastMove.from, state.lastMove.to] : []);
  const algebraic = v.notation === "algebraic";
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      const num = dark.get(`${row},${col}`);
      const [sr, sc] = at(row, col);
      const attrs = { x: sc * cell, y: sr * cell, width: cell, height: cell };
      if (num === undefined) {
        el("rect", { ...attrs, class: "light" }, svg);
        continue;
      }
      let cls = "dark";
      if (num === state.selected) cls += " selected";
      else if (targets.has(num)) cls += " target";
      else if (last.has(num)) cls += " last";
      el("rect", { ...attrs, class: cls, "data-square": num, "data-name": v.squares.get(num).name }, svg);
      if (!algebraic) {
        const t = el("text", { x: sc * cell + 3, y: sr * cell + 11, class: "num" }, svg);
        t.textContent = String(num);
      }
    }
  }
  if (algebraic) {
    // Files along the bottom edge, ranks along the left one, as the players see them.
    // Each label in the colour that stands out on its square.
    const on = (sr, sc) => {
      const [row, col] = at(sr, sc); // flipping twice is the identity
      return dark.has(`${row},${col}`) ? "on-dark" : "on-light";
    };
    for (let i = 0; i < n; i++) {
      const col = state.flipped ? n - 1 - i : i;
      const f = el(
        "text",
        { x: i * cell + cell - 4, y: SIZE - 4, "text-anchor": "end", class: `coord file ${on(n - 1, i)}` },
        svg,
      );
      f.textContent = String.fromCharCode(97 + col);
      const row = state.flipped ? n - 1 - i : i;
      const r = el("text", { x: 3, y: i * cell + 12, class: `coord rank ${on(i, 0)}` }, svg);
      r.textContent = String(n - row);
    }
  }
  for (const [num, p] of position.pieces) {
    const sq = v.squares.get(num);
    if (!sq) continue;
    const [sr, sc] = at(sq.row, sq.col);
    const cx = sc * cell + cell / 2;
    const cy = sr * cell + cell / 2;
    const g = el("g", { class: `piece ${p.color}${p.king ? " king" : ""}`, "data-piece": num }, svg);
    el("circle", { cx, cy, r: cell * 0.38, "stroke-width": 2 }, g);
    if (p.king) {
      el("circle", { cx, cy, r: cell * 0.26, fill: "none", "stroke-width": 1.5 }, g);
      const k = el("text", { x: cx, y: cy }, g);
      k.textContent = "K";
    }
  }
}

// A game-theoretic value `wld` under the count rule, where the result at the counter is
// `result` (undefined without DTC tables): win, loss, draw, or cursed-win (won, but drawn by
// the rule) and blessed-loss (lost, but drawn by it).
function underRule(wld, result) {
  if (result === undefined || result !== "draw" || wld === "draw") return wld;
  return wld === "win" ? "cursed-win" : "blessed-loss";
}

const FLIP = { win: "loss", loss: "win", draw: "draw" };

// The value of a move for the mover, its class: the API's `wld`, under the count rule where
// the API gives the position after the move at its counter (`result`, for the opponent).
function moverResult(m) {
  return underRule(m.wld, m.result === undefined ? undefined : FLIP[m.result]);
}

function describeMove(m) {
  const r = moverResult(m).replace("-", " ");
  if (r === "draw") return "draw";
  return m.dtw === null || m.dtw === undefined ? r : `${r} in ${m.dtw}`;
}

// A move's value under the count rule in words (its title), where the API gives it.
function describeMoveRule(m) {
  if (m.result === undefined) return "";
  const dtc = m.dtc === null ? "" : `, ${m.dtc} plies to conversion`;
  const reset = m.zeroing ? "; resets the counter" : "";
  return `after it: ${m.category}${dtc}, at counter ${m.counter} ${m.result} for the opponent${reset}`;
}

function plies(n) {
  return `${n} ${n === 1 ? "ply" : "plies"}`;
}

function describePosition(d) {
  const side = d.side_to_move === "white" ? "White" : "Black";
  if (d.game_over) return `game over: ${side} to move, ${d.wld}`;
  const dist = d.wld === "draw" || d.dtw === null ? "" : ` in ${plies(d.dtw)}`;
  if (d.result !== undefined) {
    const word = underRule(d.wld, d.result).replace("-", " ");
    const dtc = d.dtc === null ? "" : `, ${plies(d.dtc)} to conversion`;
    const game = d.wld === "draw" ? "" : `; without the rule ${d.wld}${dist}`;
    return `${side} to move at counter ${d.counter}: ${word}${dtc}${game}`;
  }
  return `${side} to move: ${d.wld}${dist}`;
}

// The counter box: shown where the variant has DTC tables, with the regime's limit.
function renderCounter() {
  const v = current();
  const d = state.data;
  $("counter-box").hidden = !(v && v.dtc);
  $("counter").value = String(state.counter);
  const limit = d && d.limit !== undefined ? d.limit : null;
  $("counter-limit").textContent =
    limit === null ? (d && d.result !== undefined ? "no count limit here" : "") : `drawn at ${limit}`;
  if (limit !== null) $("counter").max = String(limit - 1);
  else $("counter").removeAttribute("max");
}

function renderMoves() {
  const list = $("moves");
  list.textContent = "";
  const d = state.data;
  $("value").textContent = d ? describePosition(d) : "";
  $("value").className = d && !d.game_over ? underRule(d.wld, d.result) : "";
  renderCounter();
  if (!d) return;
  for (const m of d.moves) {
    const li = document.createElement("li");
    li.className = moverResult(m);
    li.title = describeMoveRule(m);
    li.dataset.move = m.move;
    li.dataset.fenAfter = m.fen_after;
    const a = document.createElement("span");
    a.textContent = m.move;
    const b = document.createElement("span");
    b.textContent = describeMove(m);
    li.append(a, b);
    li.addEventListener("click", () => play(m));
    list.appendChild(li);
  }
}

function renderLine() {
  const ol = $("line");
  ol.textContent = "";
  if (!state.line) return;
  state.line.steps.forEach((s, i) => {
    const li = document.createElement("li");
    li.className = moverResult(s) + (i + 1 === state.line.index ? " current" : "");
    li.textContent = `${s.move}  ${describeMove(s)}`;
    li.dataset.move = s.move;
    li.addEventListener("click", () => stepTo(i + 1));
    ol.appendChild(li);
  });
  if (state.line.cut) {
    const li = document.createElement("li");
    li.textContent = "… a draw: line cut";
    ol.appendChild(li);
  }
}

// The game's position shown, where the API has no answer for it (more pieces than the
// tables hold): the board is drawn from the analysis' FEN.
function gamePosition(v) {
  const g = state.game;
  if (!g || g.index < 0 || g.fens[g.index] !== state.fen) return null;
  return parseFen(g.fens[g.index], v);
}

// A value of the analysis ({side_to_move, wld, dtw} or null) in words.
function describeValue(val) {
  if (!val) return "not in the tables";
  const side = val.side_to_move === "white" ? "White" : "Black";
  if (val.wld === "draw") return `${side} to move: draw`;
  const dist = val.dtw === null ? "" : ` in ${val.dtw} ${val.dtw === 1 ? "ply" : "plies"}`;
  return `${side} to move: ${val.wld}${dist}`;
}

function renderGame() {
  const g = state.game;
  $("game-box").hidden = !g;
  const ol = $("game");
  ol.textContent = "";
  if (!g) return;
  g.plies.forEach((p, i) => {
    const li = document.createElement("li");
    li.dataset.ply = String(i + 1);
    li.dataset.move = p.move;
    if (p.changed_result) {
      li.classList.add("changed");
      li.title = `changed the result: ${p.change}`;
    }
    if (i + 1 === g.index) li.classList.add("current");
    const m = document.createElement("span");
    m.textContent = `${p.move_number} ${p.move}`;
    li.appendChild(m);
    if (p.changed_result && p.best_move) {
      const b = document.createElement("span");
      b.className = "best";
      b.textContent = `best ${p.best_move}`;
      li.appendChild(b);
    }
    li.addEventListener("click", () => gameStep(i + 1));
    ol.appendChild(li);
  });
  const last = g.fens.length - 1;
  if (g.index < 0) {
    $("game-step").textContent = "";
    $("game-value").textContent = "";
    return;
  }
  const p = g.index > 0 ? g.plies[g.index - 1] : null;
  $("game-step").textContent = p ? `after ${p.move_number} ${p.move} (${g.index}/${last})` : `start (0/${last})`;
  const val = p ? p.value_after : g.plies.length > 0 ? g.plies[0].value_before : null;
  $("game-value").textContent = describeValue(val);
}

// Show the game's position after `i` plies (0: its start).
function gameStep(i) {
  const g = state.game;
  if (!g || i < 0 || i >= g.fens.length) return;
  endSetup();
  g.index = i;
  state.counter = 0;
  const p = i > 0 ? g.plies[i - 1] : null;
  state.lastMove = p ? { from: p.from, to: p.to } : null;
  goto(g.fens[i], true);
}

// Send the pasted PDN to the API; show its first game's moves and its start position.
async function analyzeGame() {
  const text = $("pdn").value;
  document.body.dataset.state = "loading";
  const r = await fetch(`/api/v1/${encodeURIComponent(state.variant)}/analyze`, {
    method: "POST",
    headers: { "Content-Type": "text/plain; charset=utf-8" },
    body: text,
  });
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    body = { error: `HTTP ${r.status}` };
  }
  if (!r.ok) {
    state.game = null;
    renderGame();
    setStatus(`${r.status}: ${body.error}`, true);
    document.body.dataset.state = "error";
    return;
  }
  const game = body.games[0];
  const plies = game.plies || [];
  const fens = game.start_fen ? [plies.length > 0 ? plies[0].fen_before : game.start_fen] : [];
  for (const p of plies) fens.push(p.fen_after);
  let error = game.error ? `game ${game.game}: ${game.error.message}` : "";
  if (body.games.length > 1) error += ` (${body.games.length} games pasted: the first is shown)`;
  $("game-error").textContent = error.trim();
  state.line = null;
  if (fens.length === 0) {
    state.game = null;
    renderGame();
    setStatus(error.trim(), true);
    document.body.dataset.state = "error";
    return;
  }
  state.game = { fens, plies, index: 0 };
  $("game-error").textContent = error.trim();
  gameStep(0);
}

function hideChoice() {
  const c = $("choice");
  c.hidden = true;
  c.textContent = "";
}

// Several captures from one square to another taking different pieces: let the user pick.
function offerChoice(moves) {
  const c = $("choice");
  c.textContent = "Which capture? ";
  for (const m of moves) {
    const b = document.createElement("button");
    b.type = "button";
    const v = current();
    const sep = v.notation === "algebraic" ? ":" : "x";
    const path = [m.from, ...m.path].map((n) => squareName(v, n)).join(sep);
    b.textContent = `${path} (takes ${m.captures.map((n) => squareName(v, n)).join(", ")})`;
    b.dataset.move = m.move;
    b.addEventListener("click", () => play(m));
    c.appendChild(b);
  }
  c.hidden = false;
}

function onSquare(num) {
  hideChoice();
  if (state.setup) return place(num);
  if (state.selected !== null) {
    const ms = movesFrom(state.selected).filter((m) => m.to === num);
    if (ms.length === 1) return play(ms[0]);
    if (ms.length > 1) return offerChoice(ms);
  }
  state.selected = movesFrom(num).length > 0 && num !== state.selected ? num : null;
  drawBoard();
}

function play(m) {
  endSetup();
  state.lastMove = m;
  // The counter after the move, as the API gives it (0 after a capture or man move).
  state.counter = m.counter === undefined ? 0 : m.counter;
  goto(m.fen_after, true);
}

function stepTo(i) {
  const line = state.line;
  if (!line || i < 0 || i >= line.fens.length) return;
  line.index = i;
  state.counter = 0;
  state.lastMove = i > 0 ? line.steps[i - 1] : null;
  goto(line.fens[i], true);
}

// Setting a position up: the palette's piece goes on the square clicked (or "empty" empties
// it), and the page asks for the new position's value at once.
function place(num) {
  const put = state.put;
  if (put === "empty") state.setup.pieces.delete(num);
  else state.setup.pieces.set(num, { color: put[0] === "w" ? "white" : "black", king: put[1] === "k" });
  showSetup();
}

// The FEN of the position being set up, in the variant's notation.
function setupFen() {
  const v = current();
  const list = (color) =>
    [...state.setup.pieces]
      .filter(([, p]) => p.color === color)
      .sort((a, b) => a[0] - b[0])
      .map(([num, p]) => (p.king ? "K" : "") + squareName(v, num))
      .join(",");
  return `${state.setup.side === "black" ? "B" : "W"}:W${list("white")}:B${list("black")}`;
}

function showSetup() {
  state.lastMove = null;
  state.counter = 0;
  state.line = null;
  $("setup-side").value = state.setup.side;
  goto(setupFen(), false);
}

function choosePiece(put) {
  state.put = put;
  for (const b of document.querySelectorAll("#palette button")) {
    b.classList.toggle("chosen", b.dataset.put === put);
    b.setAttribute("aria-checked", String(b.dataset.put === put));
  }
}

// Start setting up from the position shown (or an empty board where none is).
function beginSetup() {
  const v = current();
  const shown = state.data ? parseFen(state.data.fen, v) : { side: "white", pieces: new Map() };
  state.setup = { side: shown.side, pieces: shown.pieces };
  state.selected = null;
  $("setup-panel").hidden = false;
  $("setup").textContent = "Done";
  $("setup").setAttribute("aria-pressed", "true");
  choosePiece(state.put);
  showSetup();
}

function endSetup() {
  if (!state.setup) return;
  state.setup = null;
  $("setup-panel").hidden = true;
  $("setup").textContent = "Set up a position";
  $("setup").setAttribute("aria-pressed", "false");
}

function urlFor(variant, fen) {
  const q = new URLSearchParams({ variant, fen });
  if (state.counter > 0) q.set("counter", String(state.counter));
  return `${location.pathname}?${q.toString()}`;
}

async function getJson(url) {
  const r = await fetch(url);
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    body = { error: `HTTP ${r.status}` };
  }
  return { ok: r.ok, status: r.status, body };
}

// Show position `fen`: ask the API, draw, list moves; `push` adds a history entry.
async function goto(fen, push) {
  document.body.dataset.state = "loading";
  state.selected = null;
  hideChoice();
  if (state.line && state.line.fens.indexOf(fen) < 0) state.line = null;
  else if (state.line) state.line.index = state.line.fens.indexOf(fen);
  if (state.game && state.game.fens[state.game.index] !== fen) state.game.index = state.game.fens.indexOf(fen);
  const url = urlFor(state.variant, fen);
  if (push) history.pushState({ variant: state.variant, fen }, "", url);
  else history.replaceState({ variant: state.variant, fen }, "", url);
  $("fen").value = fen;
  const v = current();
  const counter = v && v.dtc ? `&counter=${state.counter}` : "";
  const r = await getJson(
    `/api/v1/${encodeURIComponent(state.variant)}?fen=${encodeURIComponent(fen)}${counter}`,
  );
  if (r.ok) {
    state.data = r.body;
    state.fen = r.body.fen;
    setStatus("", false);
  } else {
    state.data = null;
    state.fen = fen;
    setStatus(`${r.status}: ${r.body.error}`, true);
  }
  drawBoard();
  renderMoves();
  renderLine();
  renderGame();
  document.body.dataset.fen = state.fen;
  document.body.dataset.state = r.ok ? "ready" : "error";
}

async function showLine() {
  const fen = state.fen;
  const r = await getJson(
    `/api/v1/${encodeURIComponent(state.variant)}/mainline?fen=${encodeURIComponent(fen)}`,
  );
  if (!r.ok) {
    setStatus(`${r.status}: ${r.body.error}`, true);
    return;
  }
  state.line = {
    fens: [r.body.fen, ...r.body.mainline.map((s) => s.fen_after)],
    steps: r.body.mainline,
    index: 0,
    cut: r.body.cut,
  };
  renderLine();
}

function lineStep(delta) {
  if (state.line) return stepTo(state.line.index + delta);
  if (delta > 0 && state.data && state.data.moves.length > 0) return play(state.data.moves[0]);
  if (delta < 0) history.back();
}

function fromUrl() {
  const q = new URLSearchParams(location.search);
  let variant = q.get("variant");
  if (!state.variants.has(variant)) variant = state.variants.keys().next().value;
  state.variant = variant;
  $("variant").value = variant;
  const c = parseInt(q.get("counter") || "0", 10);
  state.counter = Number.isNaN(c) || c < 0 ? 0 : c;
  return q.get("fen") || state.variants.get(variant).example;
}

async function start() {
  const r = await getJson("/api/v1/variants");
  if (!r.ok) {
    setStatus(`cannot list variants: ${r.body.error}`, true);
    return;
  }
  const select = $("variant");
  for (const v of r.body.variants) {
    state.variants.set(v.name, {
      ...v,
      squares: new Map(v.squares.map((s) => [s.number, s])),
      names: new Map(v.squares.map((s) => [s.name, s.number])),
    });
    const o = document.createElement("option");
    o.value = v.name;
    o.textContent = `${v.name} (${v.board}x${v.board}, up to ${v.max_pieces} pieces)`;
    select.appendChild(o);
  }
  select.addEventListener("change", () => {
    endSetup();
    state.variant = select.value;
    state.line = null;
    state.game = null;
    state.lastMove = null;
    state.counter = 0;
    goto(state.variants.get(state.variant).example, true);
  });
  $("counter").addEventListener("change", () => {
    const c = parseInt($("counter").value, 10);
    state.counter = Number.isNaN(c) || c < 0 ? 0 : c;
    goto(state.fen, true);
  });
  $("board").addEventListener("click", (e) => {
    const sq = e.target.closest("[data-square]");
    if (sq) onSquare(parseInt(sq.dataset.square, 10));
  });
  $("fen-form").addEventListener("submit", (e) => {
    e.preventDefault();
    endSetup();
    state.lastMove = null;
    state.counter = 0;
    goto($("fen").value.trim(), true);
  });
  $("pdn-form").addEventListener("submit", (e) => {
    e.preventDefault();
    analyzeGame();
  });
  $("game-first").addEventListener("click", () => state.game && gameStep(0));
  $("game-prev").addEventListener("click", () => state.game && gameStep(state.game.index - 1));
  $("game-next").addEventListener("click", () => state.game && gameStep(state.game.index + 1));
  $("game-last").addEventListener("click", () => state.game && gameStep(state.game.fens.length - 1));
  $("line-show").addEventListener("click", showLine);
  $("line-next").addEventListener("click", () => lineStep(1));
  $("line-back").addEventListener("click", () => lineStep(-1));
  $("line-start").addEventListener("click", () => state.line && stepTo(0));
  $("flip").addEventListener("click", () => {
    state.flipped = !state.flipped;
    drawBoard();
  });
  $("setup").addEventListener("click", () => {
    if (state.setup) {
      endSetup();
      goto(state.fen, true);
    } else beginSetup();
  });
  for (const b of document.querySelectorAll("#palette button")) {
    b.addEventListener("click", () => choosePiece(b.dataset.put));
  }
  $("setup-side").addEventListener("change", () => {
    if (!state.setup) return;
    state.setup.side = $("setup-side").value;
    showSetup();
  });
  $("setup-clear").addEventListener("click", () => {
    if (!state.setup) return;
    state.setup.pieces = new Map();
    showSetup();
  });
  $("setup-start").addEventListener("click", () => {
    if (!state.setup) return;
    const start = parseFen(current().start, current());
    state.setup = { side: start.side, pieces: start.pieces };
    showSetup();
  });
  window.addEventListener("popstate", () => {
    endSetup();
    state.lastMove = null;
    goto(fromUrl(), false);
  });
  goto(fromUrl(), false);
}

start();
