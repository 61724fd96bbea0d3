// The sandbox page: the local Bot API's chats as Telegram shows them (docs/sandbox.md).
// The state of every chat arrives as server-sent events (api/events); what a person does
// is posted to api/send, api/tap, api/people, api/restart. No build step, no library.

const $ = (selector, root = document) => root.querySelector(selector);
let S = {}; // the page's texts (locales/*.ftl, sandbox-*)
let state = null;
let me = null; // the person playing now (whose private chat is shown)
let first = true; // the first state: what is there already neither rings nor toasts
const seen = new Set(); // answers shown and notifying messages announced
const unread = new Map(); // person id -> notifying messages not looked at

const t = (key) => S[key] ?? key;

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status === 410) toast(t("sandbox-gone"));
  return response;
}

// -- Telegram's HTML: only its tags are kept, everything else is text.
const TAGS = { B: "b", STRONG: "b", I: "i", EM: "i", U: "u", INS: "u", S: "s", STRIKE: "s",
  DEL: "s", CODE: "code", PRE: "pre", BLOCKQUOTE: "blockquote" };

function rich(html) {
  const doc = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  const out = document.createElement("div");
  out.className = "text";
  copy(doc.body, out);
  return out;
}

function copy(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      to.append(node.textContent);
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    let el;
    if (node.tagName === "A") {
      el = document.createElement("a");
      const href = node.getAttribute("href") || "";
      if (/^(https?|tg):/i.test(href)) el.href = href;
    } else if (node.tagName === "TG-TIME") {
      // Telegram's date_time entity: each reader's app draws the moment in their language
      // and time ("r": relative, counting as they look), not the UTC text inside it.
      const moment = document.createElement("time");
      moment.className = "tg-time";
      moment.dataset.unix = node.getAttribute("unix") || "0";
      moment.dataset.format = node.getAttribute("format") || "";
      moment.textContent = when(moment);
      to.append(moment);
      continue;
    } else if (node.tagName === "TG-SPOILER" || node.classList.contains("tg-spoiler")) {
      el = document.createElement("span");
      el.className = "spoiler";
      el.onclick = () => el.classList.add("shown");
    } else if (TAGS[node.tagName]) {
      el = document.createElement(TAGS[node.tagName]);
    } else {
      el = document.createElement("span");
    }
    copy(node, el);
    to.append(el);
  }
}

function when(moment) {
  const person = state && state.people.find((p) => p.id === me);
  const lang = (person && person.lang) || document.documentElement.lang || "en";
  const at = Number(moment.dataset.unix) * 1000;
  if (moment.dataset.format.includes("r")) {
    const seconds = Math.round((at - Date.now()) / 1000);
    const [value, unit] = Math.abs(seconds) < 90 ? [seconds, "second"] : [Math.round(seconds / 60), "minute"];
    return new Intl.RelativeTimeFormat(lang, { numeric: "auto" }).format(value, unit);
  }
  return new Date(at).toLocaleTimeString(lang);
}

setInterval(() => {
  for (const moment of document.querySelectorAll("time.tg-time")) moment.textContent = when(moment);
}, 1000);

// -- links: t.me links to the bot act as in Telegram, inside the sandbox.
function openLink(url) {
  const m = /^https?:\/\/t\.me\/([A-Za-z0-9_]+)(?:\/([A-Za-z0-9_]+))?\/?(?:\?(.*))?$/.exec(url);
  if (!m || m[1].toLowerCase() !== state.bot.username.toLowerCase()) {
    window.open(url, "_blank", "noopener");
    return;
  }
  const query = new URLSearchParams(m[3] || "");
  if (m[2] || query.has("startapp")) return openTable(query.get("startapp") || "");
  if (query.has("startgroup")) return $('[data-chat="group"] input').focus();
  $('[data-chat="private"] input').focus();
  if (query.has("start")) post("api/send", { person: me, chat: me, text: `/start ${query.get("start")}` });
}

document.addEventListener("click", (event) => {
  const a = event.target.closest(".msg a[href]");
  if (!a) return;
  event.preventDefault();
  openLink(a.href);
});

// -- rendering
function person(id) {
  return state.people.find((p) => p.id === id);
}

function bubble(chatId, msg) {
  const li = document.createElement("li");
  li.className = "msg" + (!msg.bot && msg.sender_id === me ? " mine" : "");
  li.dataset.id = msg.id;
  if (!msg.bot && chatId < 0) {
    const who = document.createElement("div");
    who.className = "who";
    who.textContent = msg.sender;
    li.append(who);
  }
  li.append(rich(msg.html));
  if (msg.buttons.length) {
    const keyboard = document.createElement("div");
    keyboard.className = "keyboard";
    for (const row of msg.buttons) {
      const div = document.createElement("div");
      div.className = "row";
      for (const b of row) {
        const button = document.createElement("button");
        button.textContent = b.text;
        if (b.style) button.classList.add(b.style);
        if (b.url) {
          button.classList.add("url");
          button.onclick = () => openLink(b.url);
        } else if (b.data !== null) {
          button.onclick = () =>
            post("api/tap", { person: me, chat: chatId, message: msg.id, data: b.data });
        }
        div.append(button);
      }
      keyboard.append(div);
    }
    li.append(keyboard);
  }
  const meta = document.createElement("div");
  meta.className = "meta";
  const time = new Date(msg.date * 1000).toLocaleTimeString(document.documentElement.lang, { hour: "2-digit", minute: "2-digit" });
  meta.textContent = (msg.edited ? `${t("sandbox-edited")} ` : "") + time;
  if (msg.notified) {
    const bell = document.createElement("span");
    bell.className = "bell";
    bell.title = t("sandbox-notifies");
    meta.append(bell);
  }
  li.append(meta);
  return li;
}

function showChat(section, chatId, messages) {
  const list = $(".messages", section);
  const other = list.dataset.chat !== String(chatId); // another person's chat: from its end
  const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 30;
  list.replaceChildren(...messages.filter((m) => !m.service).map((m) => bubble(chatId, m)));
  list.dataset.chat = chatId;
  if (atEnd || other || first) list.scrollTop = list.scrollHeight;
}

function render() {
  if (me === null) me = state.people[0].id;
  unread.delete(me);
  const people = $("#people");
  people.replaceChildren(
    ...state.people.map((p) => {
      const button = document.createElement("button");
      button.dataset.person = p.id;
      button.setAttribute("aria-pressed", String(p.id === me));
      button.textContent = p.name;
      const lang = document.createElement("span");
      lang.className = "lang";
      lang.textContent = p.lang;
      button.append(lang);
      if (unread.get(p.id)) {
        const badge = document.createElement("span");
        badge.className = "badge";
        badge.textContent = unread.get(p.id);
        button.append(badge);
      }
      button.onclick = () => {
        me = p.id;
        render();
      };
      return button;
    }),
  );
  $("#add-person").hidden = state.people.length >= 6;
  const status = $("#bot-status");
  status.className = `status ${state.bot.status}`;
  status.textContent = t(`sandbox-bot-${state.bot.status}`);
  $("#restart").disabled = state.bot.status !== "running";
  $("#group-title").textContent = state.group.title;
  showChat($('[data-chat="group"]'), state.group.id, state.group.messages);
  const p = person(me) ?? state.people[0]; // (a person just added: in the next state)
  $("#private-title").textContent = p.name;
  showChat($('[data-chat="private"]'), p.id, p.messages);
  $("#start").hidden = p.started;
  $("#not-started").hidden = p.started;
  $('[data-chat="private"] .compose').hidden = !p.started;
  $("#open-table").hidden = !state.miniapp;
}

// -- what rings: tap answers (toasts, alerts) and messages that notify
function toast(text, notify = false) {
  const div = document.createElement("div");
  div.className = "toast" + (notify ? " notify" : "");
  div.textContent = text;
  const toasts = $("#toasts");
  toasts.append(div);
  while (toasts.children.length > 3) toasts.firstChild.remove(); // the newest three
  setTimeout(() => div.remove(), 4000);
}

// What a notification says: the message's last bold line (a hand's "Your turn: ..."),
// else its first line.
// As a phone's notification: the message's first line, cut to fit.
function headline(html) {
  const line = rich(html).textContent.split("\n").find((l) => l.trim()) || "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function announce() {
  for (const answer of state.answers) {
    const key = `answer:${answer.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (first) continue;
    if (answer.url) {
      me = answer.person;
      openLink(answer.url);
    }
    if (!answer.text) continue;
    if (answer.alert) {
      $("#alert p").textContent = answer.text;
      if (!$("#alert").open) $("#alert").showModal();
    } else {
      toast(answer.text);
    }
  }
  const chats = [[state.group.id, state.group.title, state.group.messages]];
  for (const p of state.people) chats.push([p.id, p.name, p.messages]);
  for (const [chatId, name, messages] of chats) {
    for (const msg of messages) {
      const key = `note:${chatId}:${msg.id}`;
      if (!msg.notified || seen.has(key)) continue;
      seen.add(key);
      if (first) continue;
      toast(`${name}: ${headline(msg.html)}`, true);
      if (chatId > 0 && chatId !== me) unread.set(chatId, (unread.get(chatId) || 0) + 1);
    }
  }
}

// -- the Mini App (where this build has it): /app/ with initData signed by the sandbox
async function openTable(start = "") {
  const response = await fetch(`api/miniapp?person=${me}&start=${encodeURIComponent(start)}`);
  if (!response.ok) return;
  const { init_data } = await response.json();
  const hash = new URLSearchParams({ tgWebAppData: init_data, tgWebAppVersion: "8.0", tgWebAppPlatform: "web" });
  $("#miniapp iframe").src = `/app/#${hash}`;
  $("#miniapp").hidden = false;
}

// -- wiring
function composer(selector, chat) {
  const form = $(`${selector} .compose`);
  form.onsubmit = (event) => {
    event.preventDefault();
    const input = form.elements.text;
    if (!input.value.trim()) return;
    post("api/send", { person: me, chat: chat(), text: input.value });
    input.value = "";
  };
}

async function main() {
  const response = await fetch(`api/strings${location.search}`);
  const texts = await response.json();
  S = texts.strings;
  document.documentElement.lang = texts.lang;
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  for (const el of document.querySelectorAll("[data-t-placeholder]")) el.placeholder = t(el.dataset.tPlaceholder);
  composer('[data-chat="group"]', () => state.group.id);
  composer('[data-chat="private"]', () => me);
  $("#start").onclick = () => post("api/send", { person: me, chat: me, text: "/start" });
  $("#restart").onclick = () => post("api/restart", {});
  $("#open-table").onclick = () => openTable();
  $("#close-table").onclick = () => {
    $("#miniapp").hidden = true;
    $("#miniapp iframe").src = "about:blank";
  };
  $("#add-person").onsubmit = async (event) => {
    event.preventDefault();
    const form = event.target;
    const answer = await post("api/people", { name: form.elements.name.value, lang: form.elements.lang.value });
    if (answer.ok) {
      me = (await answer.json()).id;
      form.reset();
    } else {
      toast(t("sandbox-full"));
    }
  };
  const events = new EventSource("api/events");
  events.addEventListener("state", (event) => {
    const next = JSON.parse(event.data);
    if (state && next.version < state.version) {
      first = true; // the sandbox started again: its chats are new
      seen.clear();
      unread.clear();
    }
    state = next;
    $("#offline").hidden = true;
    announce();
    render();
    document.body.dataset.version = state.version; // what the page shows now (tests wait on it)
    first = false;
  });
  events.onerror = () => {
    $("#offline").hidden = false;
  };
}

main();
