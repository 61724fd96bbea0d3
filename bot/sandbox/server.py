"""The sandbox: a local Bot API, the bot running against it, and the page that plays it.

One aiohttp app on loopback serves all three:

- ``/bot<token>/<method>``: the local Bot API (`bot.sandbox.telegram.FakeTelegram`, with
  Telegram's flood limits), which the bot reaches through ``BOT_API_BASE_URL``;
- ``/``, ``/static/...``: the page (`bot/sandbox/static/`), a group chat and each person's
  private chat;
- ``/api/...``: what the page does (people write, tap, join; the bot restarts) and
  ``/api/events``, the state of every chat as server-sent events after each change.

The bot is `bot.__main__.serve` in a task of this process, with its own SQLite file, started
afresh with the sandbox (the local Telegram keeps its chats in memory only, so a database
that outlived them would name messages that no longer exist). "Restart the bot" stops that
task as a stop signal would and starts a new application: the games resume from the
database, the chats are still there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from fluent.syntax import FluentParser
from fluent.syntax import ast as fluent_ast

from bot.config import Settings
from bot.i18n import LOCALES_DIR, Translator
from bot.sandbox.telegram import FakeMessage, FakeTelegram, FakeUser, Limits

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

TOKEN = "1000001:local-sandbox"  # the local Bot API's token: no secret, it opens nothing else
BOT_USERNAME = "durak_sandbox_bot"
GROUP_ID = -1001000000001
FIRST_PERSON_ID = 1001
MAX_PEOPLE = 6
MAX_NAME = 32
LANGUAGES = ("en", "de", "ru")
KEPT_MESSAGES = 80  # per chat, shown on the page (Telegram keeps more; the page is a phone)
KEPT_TAPS = 40
PING_SECONDS = 15.0
WAIT = 60.0  # `Sandbox.wait_for` gives up after so many seconds
STATIC = Path(__file__).with_name("static")
TELEGRAM_WEB_APP_JS = "https://telegram.org/js/telegram-web-app.js"
_APP_CALLS = {("POST", "session"): "session", ("GET", "events"): "events", ("POST", "move"): "move"}
"""The Mini App's API (docs/miniapp.md): what the sandbox hands on to `MiniApp`."""
_CONTENT_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
}


def sandbox_settings(base_url: str, database: Path) -> Settings:
    """The bot's settings in the sandbox: the environment's (TURN_TIMEOUT, COMPUTER_DELAY...)
    but for the token, the Bot API, the database and the web server, which are the
    sandbox's."""
    return Settings(
        bot_token=TOKEN,  # type: ignore[arg-type]
        bot_api_base_url=base_url,
        database_url=f"sqlite:///{database}",
        web_port=None,
        webhook_url=None,
        webhook_secret=None,
    )


class SandboxUnavailable(Exception):
    """The sandbox cannot serve its page (its port is taken, say): the message says why."""


@dataclass
class _Tap:
    """A tap made on the page, whose answer (a toast or an alert) the page shows."""

    seq: int
    query_id: str
    person: int


class BotRunner:
    """The bot as a task of this process: `start`, `stop`, `restart`."""

    def __init__(self, settings: Settings, changed: Callable[[], None]) -> None:
        self.settings = settings
        self._changed = changed
        self._task: asyncio.Task[None] | None = None
        self.application: Any = None
        self.restarts = 0
        self.finished = asyncio.Event()  # stopped by a signal, or failed: the sandbox ends
        self.error: BaseException | None = None

    @property
    def status(self) -> str:
        """Whether the bot is "running" (taking updates), "starting", or "stopped"."""
        from bot.leader import LEADERSHIP_KEY

        if self._task is None or self._task.done():
            return "stopped"
        app = self.application
        if app is not None and app.running and app.bot_data.get(LEADERSHIP_KEY) is not None:
            return "running"
        return "starting"

    def start(self) -> None:
        from bot.__main__ import serve
        from bot.app import build_application

        self.application = build_application(self.settings)
        self._task = asyncio.create_task(serve(self.application), name="sandbox-bot")
        self._task.add_done_callback(self._done)
        self._changed()

    def _done(self, task: asyncio.Task[None]) -> None:
        self._changed()
        if task is not self._task:
            return  # a restart's stop
        if not task.cancelled():
            self.error = task.exception()
        self.finished.set()

    async def stop(self) -> None:
        """Stop the bot as a stop signal does: the updates under way finished, pending table
        edits published, the database closed."""
        task, self._task = self._task, None
        if task is None or task.done():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        self._changed()

    async def restart(self) -> None:
        await self.stop()
        self.restarts += 1
        logger.info("sandbox: the bot restarts (%d)", self.restarts)
        self.start()


class Sandbox:
    """The local Bot API with its group and people, the bot, and the page's API."""

    def __init__(
        self,
        *,
        database: Path,
        translator: Translator | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.translator = translator or Translator()
        self.fake = FakeTelegram(token=TOKEN, bot_username=BOT_USERNAME, bot_first_name="Durak")
        self.fake.enforce(limits)  # Telegram's flood limits (tests: others of their choice)
        self.database = database
        self.version = 0
        self._event = asyncio.Event()
        self._taps: list[_Tap] = []
        self._tap_seq = 0
        self.people: list[FakeUser] = []
        lang = self.translator.default
        self.group = self.fake.group(
            GROUP_ID, self.translator.t(lang, "sandbox-group-title"), bot_admin=True
        )
        for name in self.translator.t(lang, "sandbox-default-people").split(","):
            self.add_person(name.strip(), lang)
        self.group.members[self.people[0].id] = "creator"
        self._defaults = lang  # the language the group and the first people are made in
        self.fake.watch(lambda _message, _change: self.changed())
        self.bot: BotRunner | None = None
        self.app = web.Application(client_max_size=1 << 20)
        self.app.add_routes(
            [
                web.route("*", "/bot{token}/{method}", self._bot_api),
                web.get("/", self._index),
                web.get("/static/{name}", self._static),
                web.get("/api/strings", self._strings),
                web.get("/api/state", self._state),
                web.get("/api/events", self._events),
                web.post("/api/send", self._send),
                web.post("/api/tap", self._tap),
                web.post("/api/people", self._add_person),
                web.post("/api/restart", self._restart),
                web.get("/api/miniapp", self._miniapp),
                web.get("/app", self._app_redirect),
                web.get("/app/", self._app_index),
                web.get("/app/static/{name}", self._app_file),
                web.route("*", "/app/api/{call}", self._app_api),
            ]
        )
        self._mini_app: Any = None  # the Mini App's routes over the running bot
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self.port = 0

    # -- running

    async def start(self, host: str = "127.0.0.1", port: int = 8080) -> None:
        """Listen on `host`:`port` (0: any free port, then `port` says which), then start the
        bot against the local Bot API with a fresh database."""
        self._runner = web.AppRunner(
            self.app, access_log=None, handler_cancellation=True, shutdown_timeout=5.0
        )
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, host, port).start()
        except OSError as error:
            await self._runner.cleanup()
            raise SandboxUnavailable(
                f"the sandbox cannot listen on {host}:{port} ({error.strerror or error}): "
                f"set WEB_PORT to a free port"
            ) from None
        self.port = int(self._runner.addresses[0][1])
        self._fresh_database()
        settings = sandbox_settings(f"http://127.0.0.1:{self.port}/bot", self.database)
        self.bot = BotRunner(settings, self.changed)
        self.bot.start()

    def _fresh_database(self) -> None:
        self.database.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.database}{suffix}").unlink(missing_ok=True)

    async def close(self) -> None:
        if self.bot is not None:
            await self.bot.stop()
        self._closing.set()  # the event streams end
        self.changed()
        if self._runner is not None:
            await self._runner.cleanup()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        """Return once `condition()` holds, checked after every change the page would be
        sent (tests: what a person would see next; TimeoutError after `WAIT` s)."""
        async with asyncio.timeout(WAIT):
            while not condition():
                await self._event.wait()

    def changed(self) -> None:
        """Something the page shows changed: wake the event streams."""
        self.version += 1
        self._event.set()
        self._event = asyncio.Event()

    # -- people

    def person(self, person_id: object) -> FakeUser:
        for user in self.people:
            if str(user.id) == str(person_id):
                return user
        raise web.HTTPNotFound(text="no such person")

    def add_person(self, name: str, lang: str) -> FakeUser:
        name = " ".join(name.split())[:MAX_NAME]
        if not name or lang not in LANGUAGES or len(self.people) >= MAX_PEOPLE:
            raise ValueError("a name, a language of en/de/ru, and at most 6 people")
        user = self.fake.user(FIRST_PERSON_ID + len(self.people), name, lang)
        self.people.append(user)
        self.fake.queue(user.join(self.group))  # Telegram tells the bot who joined
        self.changed()
        return user

    def send(self, user: FakeUser, chat_id: int, text: str) -> None:
        """`user` writes `text` in the group or in their private chat (a command, say)."""
        if chat_id not in (GROUP_ID, user.id):
            raise web.HTTPBadRequest(text="a person writes in the group or their own chat")
        self.fake.queue(user.send(chat_id, text))

    def tap(self, user: FakeUser, chat_id: int, message_id: int, data: str) -> int:
        """`user` taps the button with `data` on a message; returns the tap's number, under
        which its answer is shown."""
        if chat_id not in (GROUP_ID, user.id):
            raise web.HTTPBadRequest(text="a person taps in the group or their own chat")
        try:
            message = self.fake.message(chat_id, message_id)
            message.button(data)
            update = user.tap_raw(message, data)
        except LookupError:
            raise web.HTTPGone(text="that message is gone") from None
        self._tap_seq += 1
        self._taps.append(_Tap(self._tap_seq, update["callback_query"]["id"], user.id))
        del self._taps[:-KEPT_TAPS]
        self.fake.queue(update)
        return self._tap_seq

    # -- what the page shows

    def state(self) -> JSON:
        fake = self.fake
        answers = []
        for tap in self._taps:
            answer = fake.answer_for(tap.query_id)
            if answer is not None:
                answers.append(
                    {
                        "id": tap.seq,
                        "person": tap.person,
                        "text": answer.text or "",
                        "alert": answer.show_alert,
                        "url": answer.url,  # a deep link: Telegram opens it
                    }
                )
        return {
            "version": self.version,
            "bot": {
                "username": fake.bot_username,
                "status": self.bot.status if self.bot else "stopped",
                "restarts": self.bot.restarts if self.bot else 0,
            },
            "group": {
                "id": GROUP_ID,
                "title": self.group.title,
                "messages": self._messages(GROUP_ID),
            },
            "people": [
                {
                    "id": user.id,
                    "name": user.first_name,
                    "lang": user.language_code,
                    "started": user.started,
                    "messages": self._messages(user.id),
                }
                for user in self.people
            ],
            "answers": answers,
            "miniapp": _sign_init_data() is not None and _mini_app_class() is not None,
        }

    def _messages(self, chat_id: int) -> list[JSON]:
        shown = self.fake.messages(chat_id, from_bot=None)[-KEPT_MESSAGES:]
        return [self._message(m) for m in shown]

    def _message(self, message: FakeMessage) -> JSON:
        sender = "" if message.from_bot else self._name(message.sender_id)
        return {
            "id": message.message_id,
            "bot": message.from_bot,
            "sender": sender,
            "sender_id": message.sender_id,
            "html": message.html if message.text or message.html else "",
            "service": bool(message.service),
            "buttons": [
                [
                    {"text": b.text, "data": b.callback_data, "url": b.url, "style": b.style}
                    for b in row
                ]
                for row in message.buttons
            ],
            "edited": message.edit_date is not None,
            "notified": message.notified,
            "date": message.date,
        }

    def _name(self, user_id: int) -> str:
        for user in self.people:
            if user.id == user_id:
                return user.first_name
        return str(user_id)

    # -- routes

    async def _bot_api(self, request: web.Request) -> web.StreamResponse:
        """The local Bot API: each request answered by the fake as Telegram would answer it."""
        body = await request.read()
        headers = {
            k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept")
        }
        forwarded = httpx.Request(
            request.method,
            f"https://api.telegram.org{request.rel_url}",
            headers=headers,
            content=body,
        )
        response = await self.fake.handle(forwarded)
        if request.match_info["method"].lower() != "getupdates":
            self.changed()
        return web.Response(
            status=response.status_code,
            body=response.content,
            content_type="application/json",
        )

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return await self._file("index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        return await self._file(request.match_info["name"])

    async def _file(self, name: str) -> web.StreamResponse:
        path = STATIC / name
        if "/" in name or name.startswith(".") or not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(
            body=path.read_bytes(),
            content_type=_CONTENT_TYPES.get(path.suffix, "application/octet-stream"),
            charset="utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    def speak(self, lang: str) -> None:
        """The group's title and the first people's names and language become `lang`'s, as
        long as nothing has happened yet (nobody added, nothing said): a page in German
        starts with Anna and Ben in the Durak-Runde, speaking German to the bot."""
        now = self._default_names(self._defaults)
        if lang == self._defaults or [user.first_name for user in self.people] != now:
            return
        chats = [GROUP_ID, *(user.id for user in self.people)]
        said = (m for chat in chats for m in self.fake.messages(chat, from_bot=None))
        if any(m.text for m in said):  # (the people's joining is no text)
            return
        self._defaults = lang
        self.group.title = self.translator.t(lang, "sandbox-group-title")
        for user, name in zip(self.people, self._default_names(lang), strict=False):
            user.first_name, user.language_code = name, lang
        self.changed()

    def _default_names(self, lang: str) -> list[str]:
        names = self.translator.t(lang, "sandbox-default-people").split(",")
        return [" ".join(name.split())[:MAX_NAME] for name in names]

    async def _strings(self, request: web.Request) -> web.StreamResponse:
        """The page's texts (the `sandbox-*` messages) in the language asked for; while
        nothing has happened, the group and the first people take that language."""
        lang = page_language(request, self.translator)
        self.speak(lang)
        keys = page_keys()
        return web.json_response(
            {"lang": lang, "strings": {key: self.translator.t(lang, key) for key in keys}}
        )

    async def _state(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(self.state())

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """The state after every change, as server-sent events (a comment every 15 s)."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        sent = -1
        while not self._closing.is_set():
            if sent != self.version:
                await asyncio.sleep(0.05)  # a burst of calls is sent as one state
                sent = self.version
                data = json.dumps(self.state(), ensure_ascii=False)
                await response.write(f"event: state\nid: {sent}\ndata: {data}\n\n".encode())
                continue
            try:
                await asyncio.wait_for(self._event.wait(), PING_SECONDS)
            except TimeoutError:
                await response.write(b": ping\n\n")
        return response

    async def _body(self, request: web.Request) -> JSON:
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="a JSON body") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="a JSON object")
        return body

    async def _send(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        user = self.person(body.get("person"))
        text = str(body.get("text") or "").strip()
        if not text or len(text) > 4096:
            raise web.HTTPBadRequest(text="a message of 1 to 4096 characters")
        self.send(user, _int(body.get("chat")), text)
        return web.json_response({"ok": True})

    async def _tap(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        user = self.person(body.get("person"))
        seq = self.tap(
            user, _int(body.get("chat")), _int(body.get("message")), str(body.get("data"))
        )
        return web.json_response({"ok": True, "tap": seq})

    async def _add_person(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        try:
            user = self.add_person(str(body.get("name") or ""), str(body.get("lang") or ""))
        except ValueError as exc:
            raise web.HTTPBadRequest(text=str(exc)) from None
        return web.json_response({"ok": True, "id": user.id})

    async def _restart(self, request: web.Request) -> web.StreamResponse:
        assert self.bot is not None
        await self.bot.restart()
        return web.json_response({"ok": True})

    async def _miniapp(self, request: web.Request) -> web.StreamResponse:
        """initData for the Mini App (`/app/`) as Telegram would hand it to `person`, signed
        with the sandbox's token; 404 where this build has no Mini App."""
        sign = _sign_init_data()
        if sign is None:
            raise web.HTTPNotFound(text="no Mini App in this build")
        user = self.person(request.query.get("person"))
        fields = {
            "user": json.dumps(user.to_dict(), ensure_ascii=False, separators=(",", ":")),
            "auth_date": str(int(time.time())),
            "query_id": f"sandbox-{user.id}-{self.version}",
        }
        if request.query.get("start"):
            fields["start_param"] = request.query["start"]
        return web.json_response({"init_data": sign(TOKEN, fields)})

    # -- the Mini App (`bot.miniapp`, where the build has it), over the running bot

    def _mini_app_now(self) -> Any:
        """`bot.miniapp.routes.MiniApp` over the bot as it runs now (a new one after a
        restart: the old one's application has stopped); 404 without the Mini App."""
        cls = _mini_app_class()
        application = self.bot.application if self.bot is not None else None
        if cls is None or application is None:
            raise web.HTTPNotFound(text="no Mini App in this build")
        if self._mini_app is None or self._mini_app.application is not application:
            self._mini_app = cls(application)
        return self._mini_app

    async def _app_redirect(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/app/")

    async def _app_index(self, request: web.Request) -> web.StreamResponse:
        """The Mini App's page, with the sandbox's stand-in for Telegram's script (which
        reads the launch parameters from the URL's #hash, as Telegram passes them)."""
        page = (Path(self._mini_app_now().static) / "index.html").read_text(encoding="utf-8")
        return web.Response(
            text=page.replace(TELEGRAM_WEB_APP_JS, "/static/telegram-web-app.js"),
            content_type="text/html",
            headers={"Cache-Control": "no-cache"},
        )

    async def _app_file(self, request: web.Request) -> web.StreamResponse:
        response: web.StreamResponse = await self._mini_app_now().file(request)
        return response

    async def _app_api(self, request: web.Request) -> web.StreamResponse:
        name = _APP_CALLS.get((request.method, request.match_info["call"]))
        if name is None:
            raise web.HTTPNotFound()
        response: web.StreamResponse = await getattr(self._mini_app_now(), name)(request)
        return response


def _int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise web.HTTPBadRequest(text="a number") from None


def _sign_init_data() -> Callable[[str, dict[str, str]], str] | None:
    """`bot.miniapp.auth.sign_init_data` where this build has the Mini App, else None."""
    try:
        from bot.miniapp.auth import sign_init_data  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return sign_init_data  # type: ignore[no-any-return,unused-ignore]


def _mini_app_class() -> Any:
    """`bot.miniapp.routes.MiniApp` where this build has the Mini App, else None."""
    try:
        from bot.miniapp.routes import MiniApp  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return MiniApp


def page_keys() -> list[str]:
    """The page's texts: the `sandbox-*` messages of the reference language (en.ftl)."""
    resource = FluentParser().parse((LOCALES_DIR / "en.ftl").read_text(encoding="utf-8"))
    return [
        entry.id.name
        for entry in resource.body
        if isinstance(entry, fluent_ast.Message) and entry.id.name.startswith("sandbox-")
    ]


def page_language(request: web.Request, translator: Translator) -> str:
    """``?lang=`` if given and known, else the browser's first known language, else the
    default."""
    asked = [request.query.get("lang", "")]
    for part in request.headers.get("Accept-Language", "").split(","):
        asked.append(part.split(";")[0].strip().split("-")[0])
    for code in asked:
        if code and translator.available(code):
            return translator.normalize(code)
    return translator.default
