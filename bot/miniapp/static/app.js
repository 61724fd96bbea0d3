// The Mini App's page: draws the state the server sends (api/events) and sends moves
// (api/move). Plain ES2020, no build step; every visible text comes from `strings`.
// The contract with the server: docs/miniapp-page.md.

const tg = window.Telegram ? window.Telegram.WebApp : null;
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const RED = { "♥": true, "♦": true };
const SUIT_ID = { "♠": "s", "♥": "h", "♦": "d", "♣": "c" };
const CARD = /^(10|[2-9JQKA])([♠♥♦♣])$/;
// This page's name for its event stream: a reconnect replaces the stream it had, while the
// same person's table open elsewhere (a phone and a desktop) keeps its own.
const PAGE = Array.from(crypto.getRandomValues(new Uint8Array(9)), (b) =>
  b.toString(16).padStart(2, "0"),
).join("");
const ROLE = {
  attacker: "app-page-role-attacker",
  defender: "app-page-role-defender",
  thrower: "app-page-role-thrower",
  out: "app-page-role-out",
};

let strings = {};
let token = null;
let gameRef = null;
let state = null;
let offset = 0; // server clock minus ours, in seconds
let source = null;
let retries = 0;
let busy = false;
let renewed = false; // a session was made since the last state: a 401 now is for good
// A stream refused for good: the page says why instead of trying again.
const ENDED = { 404: "app-page-ended", 429: "app-page-too-many" };

// A text of `strings` with its { $name } placeholders filled in.
export function t(key, vars = {}) {
  const text = strings[key];
  if (text === undefined) return "";
  return text.replace(/\{\s*\$([A-Za-z0-9_-]+)\s*\}/g, (all, name) =>
    name in vars ? String(vars[name]) : all,
  );
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// ---- theme ---------------------------------------------------------------------------

function applyTheme() {
  const root = document.documentElement;
  const params = (tg && tg.themeParams) || {};
  for (const [key, value] of Object.entries(params)) {
    if (/^#[0-9a-fA-F]{3,8}$/.test(String(value))) {
      root.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
    }
  }
  root.dataset.scheme = tg && tg.colorScheme === "dark" ? "dark" : "light";
}

// ---- cards ---------------------------------------------------------------------------

const SUITS = `<svg xmlns="${SVG}" width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
<symbol id="suit-h" viewBox="0 0 100 100"><path d="M50 92C22 68 4 52 4 31a23 23 0 0 1 46-6 23 23 0 0 1 46 6c0 21-18 37-46 61z"/></symbol>
<symbol id="suit-d" viewBox="0 0 100 100"><path d="M50 2 88 50 50 98 12 50z"/></symbol>
<symbol id="suit-s" viewBox="0 0 100 100"><path d="M50 4C36 28 6 40 6 63a21 21 0 0 0 38 12l-8 21h28l-8-21a21 21 0 0 0 38-12C94 40 64 28 50 4z"/></symbol>
<symbol id="suit-c" viewBox="0 0 100 100"><circle cx="50" cy="28" r="21"/><circle cx="26" cy="60" r="21"/><circle cx="74" cy="60" r="21"/><path d="M46 50h8l8 46H38z"/></symbol>
<pattern id="back-lines" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" class="back-a"/><rect width="3" height="6" class="back-b"/></pattern>
</defs></svg>`;

function parseCard(card) {
  const match = CARD.exec(String(card));
  return match ? { rank: match[1], suit: match[2] } : null;
}

function corner(rank, suit) {
  // "10" condensed to the width of one figure, as printed cards have it: in a fanned hand
  // only a strip of each card shows, and a "1" alone would read as another rank.
  const squeeze = rank === "10" ? ' textLength="8" lengthAdjust="spacingAndGlyphs"' : "";
  return `<text class="rank" x="3.5" y="12"${squeeze}>${rank}</text><use href="#suit-${suit}" x="3.5" y="14" width="8" height="8"/>`;
}

// One card face as SVG markup (only cards that match CARD are drawn: no other text).
function faceSvg(card) {
  const c = parseCard(card);
  if (!c) return backSvg();
  const s = SUIT_ID[c.suit];
  const colour = RED[c.suit] ? "red" : "black";
  return `<svg class="card ${colour}" viewBox="0 0 50 70" role="img" aria-label="${card}"><rect class="face" x=".5" y=".5" width="49" height="69" rx="4.5"/>${corner(c.rank, s)}<g transform="rotate(180 25 35)">${corner(c.rank, s)}</g><use href="#suit-${s}" x="13" y="23" width="24" height="24"/></svg>`;
}

function backSvg() {
  return `<svg class="card back" viewBox="0 0 50 70" aria-hidden="true"><rect class="face" x=".5" y=".5" width="49" height="69" rx="4.5"/><rect x="4" y="4" width="42" height="62" rx="2.5" fill="url(#back-lines)"/></svg>`;
}

function cardNode(card, cls) {
  const node = el("span", "cardbox" + (cls ? " " + cls : ""));
  node.innerHTML = card ? faceSvg(card) : backSvg();
  if (card) node.dataset.card = card;
  return node;
}

// ---- drawing -------------------------------------------------------------------------

function timerNode(deadline) {
  const node = el("span", "timer");
  node.dataset.deadline = String(deadline);
  tickOne(node);
  return node;
}

function tickOne(node) {
  const left = Math.max(0, Math.ceil(Number(node.dataset.deadline) - (Date.now() / 1000 + offset)));
  node.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  node.classList.toggle("low", left <= 10);
}

function tick() {
  for (const node of document.querySelectorAll(".timer")) tickOne(node);
}

function seatNode(seat, withFan) {
  const node = el("div", "seat");
  node.dataset.id = seat.id;
  if (seat.to_act) node.classList.add("to-act");
  if (seat.role === "out") node.classList.add("out");
  const head = el("div", "seat-head");
  head.append(el("span", "name", seat.name));
  if (seat.computer) {
    // the lobby's mark for a computer, named for screen readers and on a long press
    const mark = el("span", "bot", "🤖");
    mark.title = t("app-page-computer");
    mark.setAttribute("aria-label", mark.title);
    head.append(mark);
  }
  if (seat.you) head.append(el("span", "badge you", t("app-page-you")));
  node.append(head);
  if (withFan) {
    const fan = el("div", "fan");
    for (let i = 0; i < Math.min(seat.cards, 6); i += 1) fan.append(cardNode(null, "mini"));
    fan.append(el("span", "count", seat.cards));
    node.append(fan);
  }
  const foot = el("div", "seat-foot");
  if (seat.role && ROLE[seat.role]) {
    foot.append(el("span", "badge role " + seat.role, t(ROLE[seat.role])));
  }
  if (seat.to_act && seat.you && !state.over) foot.append(el("span", "badge turn", t("app-your-turn")));
  if (seat.to_act && state.deadline && !state.over) foot.append(timerNode(state.deadline));
  node.append(foot);
  return node;
}

function render(next) {
  state = next;
  offset = Number(next.now) - Date.now() / 1000;
  $("notice").hidden = true;
  $("game").hidden = false;
  document.documentElement.lang = next.lang || document.documentElement.lang;

  const seats = $("seats");
  seats.replaceChildren(...next.seats.filter((s) => !s.you).map((s) => seatNode(s, true)));

  const stock = $("stock");
  stock.replaceChildren();
  stock.title = t("app-stock");
  if (next.trump && next.trump.card) {
    const trump = cardNode(next.trump.card, "trump");
    trump.title = t("app-trump");
    stock.append(trump);
  }
  const backs = next.trump && next.trump.card ? next.stock - 1 : next.stock;
  if (backs > 0) stock.append(cardNode(null, "pile-top"));
  stock.classList.toggle("none", next.stock === 0);
  const suit = next.trump ? next.trump.suit : "";
  const info = el("span", "deck-count");
  info.textContent = String(next.stock);
  stock.append(info, el("span", "pile-label", t("app-stock")));
  if (suit && !(next.trump && next.trump.card && next.stock > 0)) {
    stock.append(el("span", "trump-suit " + (RED[suit] ? "red" : "black"), suit));
  }
  const discard = $("discard");
  discard.replaceChildren();
  discard.title = t("app-discard");
  if (next.discard > 0) discard.append(cardNode(null, "pile-top"));
  discard.append(el("span", "deck-count", next.discard), el("span", "pile-label", t("app-discard")));

  const table = $("table");
  table.replaceChildren();
  for (const pair of next.table) {
    const node = el("div", "pair");
    node.append(cardNode(pair.attack, "attack"));
    if (pair.defence) node.append(cardNode(pair.defence, "defence"));
    table.append(node);
  }
  if (!next.table.length) table.append(el("p", "empty", next.over ? "" : t("app-page-table-empty")));

  const status = $("status");
  status.replaceChildren();
  if (next.over) {
    // the result message's own text (its first line says the game is over)
    status.append(el("span", "over", next.result || t("app-result")));
  } else {
    status.textContent = next.status || "";
  }

  const log = $("log");
  log.replaceChildren(...(next.log || []).slice(-3).map((line) => el("li", "", line)));

  drawMe(next);
}

function drawMe(next) {
  const mine = next.seats.find((s) => s.you);
  const mySeat = $("my-seat");
  mySeat.replaceChildren();
  const hand = $("hand");
  hand.replaceChildren();
  const actions = $("actions");
  actions.replaceChildren();
  if (next.hand === null || next.hand === undefined) {
    mySeat.append(el("span", "watching", t("app-onlooker")));
    return;
  }
  if (mine) mySeat.append(seatNode(mine, false));
  const legal = next.legal || [];
  const withCard = legal.some((a) => a.card);
  // 13 cards and more: two rows (the first the longer), so that each card's corner shows
  // its rank and suit on a 360-pixel phone; fewer overlap in one row.
  const perRow = next.hand.length >= 13 ? Math.ceil(next.hand.length / 2) : next.hand.length;
  let row = null;
  for (const [index, card] of next.hand.entries()) {
    if (index % perRow === 0) {
      row = el("div", "hand-row");
      row.style.setProperty("--n", String(Math.min(perRow, next.hand.length - index)));
      hand.append(row);
    }
    const own = legal.filter((a) => a.card === card);
    const node = el("button", "hand-card");
    node.type = "button";
    node.append(cardNode(card));
    node.dataset.card = card;
    node.setAttribute("aria-label", card);
    if (own.length) node.classList.add("legal");
    else if (withCard) node.classList.add("dim");
    node.disabled = !own.length;
    node.addEventListener("click", () => tapCard(card, node));
    row.append(node);
  }
  for (const action of legal.filter((a) => !a.card)) {
    const button = el("button", "action " + action.kind, action.label);
    button.type = "button";
    button.dataset.action = action.action;
    button.addEventListener("click", () => send(action.action, button));
    actions.append(button);
  }
}

// ---- moves ---------------------------------------------------------------------------

function tapCard(card, node) {
  if (!state || busy) return;
  const options = (state.legal || []).filter((a) => a.card === card);
  if (options.length === 1) send(options[0].action, node);
  else if (options.length > 1) choose(card, options, node);
}

function choose(card, options, node) {
  const box = $("chooser");
  $("chooser-title").replaceChildren(cardNode(card), el("span", "", t("app-choose")));
  const list = $("chooser-options");
  list.replaceChildren();
  for (const option of options) {
    const button = el("button", "option", option.label);
    button.type = "button";
    button.dataset.action = option.action;
    button.addEventListener("click", () => {
      box.hidden = true;
      send(option.action, node);
    });
    list.append(button);
  }
  const cancel = el("button", "option cancel", t("app-page-cancel"));
  cancel.type = "button";
  cancel.addEventListener("click", () => {
    box.hidden = true;
  });
  list.append(cancel);
  box.hidden = false;
}

async function postMove(action) {
  return fetch("api/move", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
    body: JSON.stringify({ game: gameRef, move: state.move, action }),
  });
}

async function send(action, node) {
  if (busy || !state) return;
  busy = true;
  if (node) node.classList.add("busy");
  try {
    let answer = await postMove(action);
    if (answer.status === 401) {
      const fresh = await session();
      if (!fresh.ok) return fatal(fresh.message);
      answer = await postMove(action);
    }
    const body = await answer.json();
    // (a refusal other than the move's judgement, e.g. 503 while no worker leads: its message)
    if (body.text || body.message) toast(body.text || body.message);
    if (tg && tg.HapticFeedback) {
      if (body.ok) tg.HapticFeedback.impactOccurred("light");
      else tg.HapticFeedback.notificationOccurred("error");
    }
  } catch (error) {
    toast(t("app-page-failed"));
  } finally {
    busy = false;
    if (node) node.classList.remove("busy");
  }
}

let toastTimer = 0;
function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    box.hidden = true;
  }, 3500);
}

// ---- session and live events ---------------------------------------------------------

// {ok: true} with token, strings and game set; {ok: false, message} when refused (401);
// throws where the server could not be reached.
async function session() {
  const answer = await fetch("api/session", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      init_data: (tg && tg.initData) || "",
      start: (tg && tg.initDataUnsafe && tg.initDataUnsafe.start_param) || "",
    }),
  });
  if (answer.status >= 500) throw new Error("server " + answer.status);
  const body = await answer.json();
  if (!answer.ok) return { ok: false, message: body.message || "" };
  token = body.token;
  strings = body.strings || {};
  gameRef = body.game;
  if (body.lang) document.documentElement.lang = body.lang;
  if (strings["app-page-title"]) document.title = strings["app-page-title"];
  $("offline").textContent = t("app-reconnecting");
  return { ok: true };
}

function fatal(message) {
  if (source) source.close();
  source = null;
  $("game").hidden = true;
  $("chooser").hidden = true;
  $("offline").hidden = true;
  const notice = $("notice");
  notice.replaceChildren(el("p", "message", message));
  notice.hidden = false;
  document.body.dataset.state = "refused";
}

// Why the server refused a stream (EventSource does not say): its status, asked once more
// with fetch and dropped at once; 0 where it could not be reached.
async function refusal(url) {
  const abort = new AbortController();
  try {
    const answer = await fetch(url, { signal: abort.signal, cache: "no-store" });
    abort.abort();
    return answer.status;
  } catch (error) {
    return 0;
  }
}

function ended(key) {
  fatal(t(key));
  document.body.dataset.state = "ended";
}

function later(fresh) {
  $("offline").hidden = !state;
  const delay = Math.min(10000, 500 * 2 ** retries);
  retries += 1;
  setTimeout(() => connect(fresh), delay);
}

async function connect(fresh) {
  if (fresh) {
    let answer;
    try {
      answer = await session();
    } catch (error) {
      return later(true);
    }
    if (!answer.ok) return fatal(answer.message);
    renewed = true;
  }
  if (!gameRef) {
    $("notice").replaceChildren(el("p", "message", t("app-no-game")));
    document.body.dataset.state = "no-game";
    return;
  }
  const url =
    `api/events?token=${encodeURIComponent(token)}&game=${encodeURIComponent(gameRef)}` +
    `&page=${PAGE}`;
  const es = new EventSource(url);
  let opened = false;
  source = es;
  es.addEventListener("open", () => {
    opened = true;
  });
  es.addEventListener("state", (event) => {
    retries = 0;
    renewed = false;
    $("offline").hidden = true;
    render(JSON.parse(event.data));
    document.body.dataset.version = String(state.version);
  });
  es.addEventListener("error", async () => {
    if (source !== es) return;
    const refused = es.readyState === EventSource.CLOSED; // answered, but not with a stream
    es.close();
    source = null;
    const status = refused ? await refusal(url) : 0;
    if (ENDED[status]) return ended(ENDED[status]); // the game is gone; too many streams
    if (status === 401 || status === 403) {
      // an expired token gets a new session; refused with a new one, it stays refused
      return renewed ? ended("app-page-expired") : later(true);
    }
    // A 503 (a standby worker) or a lost network: "Reconnecting…" and again, a new session
    // first where it broke before it opened.
    later(!opened);
  });
}

function start() {
  document.body.insertAdjacentHTML("afterbegin", SUITS);
  applyTheme();
  if (tg) {
    tg.ready();
    tg.expand();
    if (tg.onEvent) tg.onEvent("themeChanged", applyTheme);
  }
  setInterval(tick, 250);
  connect(true);
}

start();
