"""An in-memory fake of the Telegram Bot API, spoken to through PTB's real HTTP stack.

The fake is an ``httpx.MockTransport``; python-telegram-bot talks to it exactly as it
talks to https://api.telegram.org (same URLs, same form encoding, same error handling)::

    fake = FakeTelegram()
    app = fake.make_application()          # or, by hand:
    app = (
        Application.builder()
        .token(fake.token)                 # "123:TEST"
        .request(fake.request())
        .get_updates_request(fake.updates_request())
        .build()
    )
    alice = fake.user(1, "Alice")
    group = fake.group(-1001, "Durak club", admins={alice})
    async with app:                        # initialize() calls getMe on the fake
        await fake.deliver(app, alice.send(group, "/newgame"))
        lobby = fake.last_message(group.id)
        await fake.deliver(app, alice.tap(lobby, "Join"))
        assert fake.answer_for(...)        # the toast of that tap

No network is used: any request to a host other than api.telegram.org raises
``httpx.ConnectError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.parser
import email.policy
import html as html_lib
import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

import httpx
import orjson
from telegram import Bot, Update
from telegram.ext import Application, ApplicationBuilder
from telegram.request import HTTPXRequest

from bot.request import JsonRequest, UpdatesRequest
from tests.fakes.html import HtmlParseError, parse_html, strip_text

__all__ = [
    "BOT_USERNAME",
    "TOKEN",
    "Button",
    "Call",
    "CallbackAnswer",
    "FakeGroup",
    "FakeMessage",
    "FakeTelegram",
    "FakeUser",
]

JSON = dict[str, Any]
AnyApplication = Application[Any, Any, Any, Any, Any, Any]

TOKEN = "123:TEST"
BOT_USERNAME = "durak_test_bot"
MAX_TEXT_LENGTH = 4096
MAX_CALLBACK_DATA_BYTES = 64
MAX_CALLBACK_ANSWER_LENGTH = 200
MAX_INLINE_BUTTONS = 100

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"


def _is_utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _json_response(status: int, body: JSON) -> httpx.Response:
    """An answer as Telegram sends it: compact UTF-8 JSON (orjson: the fake answers every call
    the bot benchmark makes, and the standard library's encoding was a third of its work)."""
    return httpx.Response(
        status, content=orjson.dumps(body), headers={"Content-Type": "application/json"}
    )


_METHODS = (
    "getMe",
    "sendMessage",
    "editMessageText",
    "answerCallbackQuery",
    "getChatMember",
    "setMyCommands",
    "getUpdates",
    "deleteWebhook",
)
_CANONICAL = {name.lower(): name for name in _METHODS}

_JSON_PARAMS = frozenset(
    {
        "reply_markup",
        "entities",
        "reply_parameters",
        "link_preview_options",
        "commands",
        "scope",
        "allowed_updates",
    }
)
_INT_PARAMS = frozenset(
    {
        "message_id",
        "user_id",
        "offset",
        "limit",
        "timeout",
        "cache_time",
        "message_thread_id",
        "reply_to_message_id",
        "direct_messages_topic_id",
    }
)
_BOOL_PARAMS = frozenset(
    {
        "show_alert",
        "disable_notification",
        "protect_content",
        "drop_pending_updates",
        "allow_sending_without_reply",
        "disable_web_page_preview",
        "allow_paid_broadcast",
    }
)
_BUTTON_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)
_COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,64})?")
_BOT_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
_DEFAULT_EXCLUDED_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
_UPDATE_KINDS = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "callback_query",
    "inline_query",
    "chosen_inline_result",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
    "message_reaction",
    "message_reaction_count",
    "poll",
    "poll_answer",
)


# --------------------------------------------------------------------------- models


class Button(NamedTuple):
    """One inline keyboard button as stored on a message."""

    text: str
    callback_data: str | None
    url: str | None


@dataclass
class CallbackAnswer:
    """What the bot passed to answerCallbackQuery."""

    text: str | None
    show_alert: bool
    url: str | None
    cache_time: int | None


@dataclass
class Call:
    """One Bot API request, in arrival order. ``ok`` is None while it is pending."""

    method: str
    params: JSON
    ok: bool | None = None
    result: Any = None
    error_code: int | None = None
    description: str | None = None
    injected: bool = False  # the outcome came from fail_next/timeout_next
    timed_out: bool = False

    @property
    def chat_id(self) -> int | str | None:
        value = self.params.get("chat_id")
        return value if isinstance(value, int | str) else None


@dataclass
class FakeMessage:
    """A message as the fake keeps it (live object: edits and deletions update it)."""

    chat_id: int
    message_id: int
    from_bot: bool
    sender_id: int
    date: int
    text: str  # plain text, entities parsed, trimmed like Telegram does
    html: str  # the source the bot sent (parse_mode HTML), else the escaped plain text
    parse_mode: str | None = None
    entities: list[JSON] = field(default_factory=list)
    reply_markup: JSON | None = None
    reply_to_message_id: int | None = None
    edit_date: int | None = None
    deleted: bool = False
    history: list[tuple[str, JSON | None]] = field(default_factory=list)  # (html, markup)
    service: JSON = field(default_factory=dict)  # e.g. {"migrate_to_chat_id": ...}

    @property
    def edits(self) -> int:
        return len(self.history)

    @property
    def buttons(self) -> list[list[Button]]:
        """Inline keyboard as rows of (text, callback_data, url); [] without a keyboard."""
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [
            [Button(b.get("text", ""), b.get("callback_data"), b.get("url")) for b in row]
            for row in rows
        ]

    @property
    def button_texts(self) -> list[str]:
        return [b.text for row in self.buttons for b in row]

    def button(self, text_or_data: str) -> Button:
        """Find a button by exact callback_data first, then by exact label."""
        flat = [b for row in self.buttons for b in row]
        for b in flat:
            if b.callback_data == text_or_data:
                return b
        for b in flat:
            if b.text == text_or_data:
                return b
        raise LookupError(
            f"no button {text_or_data!r} on message {self.message_id} in chat {self.chat_id}; "
            f"buttons: {[(b.text, b.callback_data) for b in flat]}"
        )


class _ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


@dataclass
class _Injected:
    method: str
    chat_id: int | str | None
    status: int | None = None
    description: str | None = None
    parameters: JSON | None = None
    timeout: bool = False
    applied: bool = False
    times: int = 1


# --------------------------------------------------------------------------- people


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _has_float(value: Any) -> bool:
    """Whether a float is anywhere in `value`: where orjson may have read an integer beyond
    64 bits (which it makes a float), the standard library reads the text instead."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


def _read_json_text(text: str) -> Any:
    """A JSON parameter's text (a keyboard, say), read as the standard library reads it (a
    ValueError if it cannot), with orjson where that gives the same, several times faster."""
    try:
        decoded = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:
        if not _has_float(decoded):
            return decoded
    return json.loads(text)


def _read_json_body(body: bytes) -> tuple[Any, bool]:
    """A JSON body as the Bot API reads it (strict: no NaN or Infinity), and whether orjson
    read it. orjson is several times faster (the fake reads every call of the bot benchmark);
    what it refuses (a lone surrogate) or may misread (an integer beyond 64 bits, which it
    reads as a float) the standard library reads instead."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    else:
        if not _has_float(decoded):
            return decoded, True
    try:
        return json.loads(body, parse_constant=_no_constant), False
    except ValueError as exc:
        raise _ApiError(400, "Bad Request: can't parse JSON request") from exc


def _user_ref(user: FakeUser | int) -> int:
    return user if isinstance(user, int) else user.id


class FakeUser:
    """A simulated Telegram user. Methods return Update dicts (JSON as Telegram sends it)."""

    def __init__(
        self,
        fake: FakeTelegram,
        user_id: int,
        first_name: str,
        *,
        language_code: str | None = "en",
        username: str | None = None,
        last_name: str | None = None,
    ) -> None:
        self._fake = fake
        self.id = user_id
        self.first_name = first_name
        self.last_name = last_name
        self.username = username
        self.language_code = language_code
        self.started = False  # has sent anything to the bot in private
        self.blocked = False  # has blocked the bot

    def __repr__(self) -> str:
        return f"FakeUser({self.id}, {self.first_name!r})"

    @property
    def private_chat_id(self) -> int:
        return self.id

    def to_dict(self) -> JSON:
        data: JSON = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code:
            data["language_code"] = self.language_code
        return data

    def chat_dict(self) -> JSON:
        data: JSON = {"id": self.id, "type": "private", "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        return data

    # -- messages

    def send(
        self,
        chat: FakeGroup | FakeUser | int,
        text: str,
        *,
        reply_to: FakeMessage | int | None = None,
    ) -> JSON:
        """A text message from this user. ``chat`` is a group, this user (= private chat)
        or a chat id. Commands ("/x", "/x@durak_test_bot") get bot_command entities."""
        chat_id = chat if isinstance(chat, int) else chat.id
        fake = self._fake
        target = fake.chat(chat_id)
        if isinstance(target, FakeUser):
            if target is not self:
                raise ValueError("a user can only write to their own private chat with the bot")
            self.started = True
            self.blocked = False
        else:
            target.add(self)
        entities = [
            {"type": "bot_command", "offset": m.start(), "length": m.end() - m.start()}
            for m in _COMMAND_RE.finditer(text)
        ]
        reply_id = reply_to.message_id if isinstance(reply_to, FakeMessage) else reply_to
        msg = fake._store_message(
            chat_id,
            from_bot=False,
            sender_id=self.id,
            text=text,
            html=html_lib.escape(text, quote=False),
            entities=entities,
            reply_to_message_id=reply_id,
        )
        return fake._new_update(message=fake._message_dict(msg))

    def send_private(self, text: str) -> JSON:
        return self.send(self, text)

    def start_private(self, payload: str | None = None) -> JSON:
        """/start (optionally a deep-link payload) in the private chat; also unblocks."""
        return self.send(self, "/start" if payload is None else f"/start {payload}")

    def block_bot(self) -> JSON:
        """Block the bot; returns the my_chat_member update Telegram sends."""
        self.blocked = True
        return self._fake._new_update(
            my_chat_member=self._fake._member_change(self.chat_dict(), self, "member", "kicked")
        )

    def unblock_bot(self) -> JSON:
        self.blocked = False
        return self._fake._new_update(
            my_chat_member=self._fake._member_change(self.chat_dict(), self, "kicked", "member")
        )

    # -- buttons

    def tap(self, message: FakeMessage, button: str) -> JSON:
        """Press an inline button (by label or callback_data) of the message's *current*
        keyboard; returns the callback_query update."""
        current = self._fake._get_message(message.chat_id, message.message_id)
        found = current.button(button)
        if found.callback_data is None:
            raise ValueError(f"button {found.text!r} has no callback_data (url={found.url!r})")
        return self.tap_raw(current, found.callback_data)

    def tap_raw(self, message: FakeMessage, data: str) -> JSON:
        """A callback_query with arbitrary data (stale or forged buttons)."""
        fake = self._fake
        current = fake._get_message(message.chat_id, message.message_id)
        if current.deleted:
            raise LookupError(f"message {current.message_id} in {current.chat_id} was deleted")
        query_id = str(next(fake._callback_ids))
        fake._callbacks[query_id] = None
        return fake._new_update(
            callback_query={
                "id": query_id,
                "from": self.to_dict(),
                "message": fake._message_dict(current),
                "chat_instance": str(abs(hash(("chat_instance", current.chat_id)))),
                "data": data,
            }
        )

    # -- groups

    def join(self, group: FakeGroup) -> JSON:
        group.members[self.id] = "member"
        return group._service_message(self, new_chat_members=[self.to_dict()])

    def leave(self, group: FakeGroup) -> JSON:
        """User leaves a group: message with left_chat_member."""
        group.members[self.id] = "left"
        return group._service_message(self, left_chat_member=self.to_dict())


class FakeGroup:
    """A simulated group or supergroup (type guessed from the id: -100... = supergroup)."""

    def __init__(
        self,
        fake: FakeTelegram,
        chat_id: int,
        title: str,
        *,
        chat_type: str | None = None,
        username: str | None = None,
    ) -> None:
        if chat_id >= 0:
            raise ValueError("group chat ids are negative")
        self._fake = fake
        self.id = chat_id
        self.title = title
        self.type = chat_type or ("supergroup" if str(chat_id).startswith("-100") else "group")
        self.username = username
        self.members: dict[int, str] = {}  # user id -> creator/administrator/member/left/kicked
        self.bot_status = "member"  # or administrator / left / kicked
        self.migrated_to: FakeGroup | None = None
        self.migrated_from: int | None = None

    def __repr__(self) -> str:
        return f"FakeGroup({self.id}, {self.title!r})"

    def chat_dict(self) -> JSON:
        data: JSON = {"id": self.id, "type": self.type, "title": self.title}
        if self.username:
            data["username"] = self.username
        return data

    def add(self, user: FakeUser | int, status: str = "member") -> None:
        """Make a user a member silently (no update). Keeps a higher status."""
        uid = _user_ref(user)
        if self.members.get(uid) not in ("creator", "administrator") or status != "member":
            self.members[uid] = status

    def status_of(self, user: FakeUser | int) -> str:
        return self.members.get(_user_ref(user), "left")

    def _service_message(self, sender: FakeUser, **service: Any) -> JSON:
        fake = self._fake
        msg = fake._store_message(
            self.id, from_bot=False, sender_id=sender.id, text="", html="", service=service
        )
        return fake._new_update(message=fake._message_dict(msg))

    def kick(self, user: FakeUser, by: FakeUser | None = None) -> JSON:
        """An admin removes ``user``: message with left_chat_member, sent by ``by``."""
        self.members[user.id] = "kicked"
        return self._service_message(by or user, left_chat_member=user.to_dict())

    def remove_bot(self, by: FakeUser | None = None, *, kicked: bool = True) -> JSON:
        """The bot is removed (kicked) or leaves; returns the my_chat_member update."""
        old = self.bot_status
        self.bot_status = "kicked" if kicked else "left"
        return self._fake._new_update(
            my_chat_member=self._fake._member_change(
                self.chat_dict(), by or self._any_admin(), old, self.bot_status
            )
        )

    def add_bot(self, by: FakeUser | None = None, *, admin: bool = False) -> JSON:
        """The bot is (re-)added; returns the my_chat_member update."""
        old = self.bot_status
        self.bot_status = "administrator" if admin else "member"
        return self._fake._new_update(
            my_chat_member=self._fake._member_change(
                self.chat_dict(), by or self._any_admin(), old, self.bot_status
            )
        )

    def migrate_to_supergroup(self, new_chat_id: int | None = None) -> JSON:
        """Upgrade this basic group. Returns the old-chat message with migrate_to_chat_id;
        the new group is ``self.migrated_to`` (see also ``migrated_from_update``)."""
        if self.type != "group":
            raise ValueError("only basic groups migrate")
        new_id = new_chat_id if new_chat_id is not None else int(f"-100{abs(self.id)}")
        new = self._fake.group(new_id, self.title, chat_type="supergroup")
        new.members = dict(self.members)
        new.bot_status = self.bot_status
        new.migrated_from = self.id
        self.migrated_to = new
        return self._service_message(self._any_admin(), migrate_to_chat_id=new_id)

    def migrated_bot_update(self) -> JSON:
        """For a supergroup created by migration: the my_chat_member update Telegram also
        sends, the bot "joining" the new chat (left -> its status)."""
        return self._fake._new_update(
            my_chat_member=self._fake._member_change(
                self.chat_dict(), self._any_admin(), "left", self.bot_status
            )
        )

    def migrated_from_update(self) -> JSON:
        """For a supergroup created by migration: the message with migrate_from_chat_id."""
        if self.migrated_from is None:
            raise ValueError("this group was not created by a migration")
        return self._service_message(self._any_admin(), migrate_from_chat_id=self.migrated_from)

    def _any_admin(self) -> FakeUser:
        fake = self._fake
        for uid, status in self.members.items():
            if status in ("creator", "administrator") and uid in fake._users:
                return fake._users[uid]
        for uid, status in self.members.items():
            if status == "member" and uid in fake._users:
                return fake._users[uid]
        raise ValueError(f"group {self.id} has no known members")


# --------------------------------------------------------------------------- the fake


def _parse_bool(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes")


class FakeTelegram:
    """In-memory Bot API. See the module docstring for wiring and usage."""

    def __init__(
        self,
        *,
        token: str = TOKEN,
        bot_username: str = BOT_USERNAME,
        bot_first_name: str = "Durak",
        strict_html: bool = True,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.bot_first_name = bot_first_name
        self.strict_html = strict_html
        self.clock: Callable[[], int] = clock or (lambda: int(time.time()))
        self.transport = httpx.MockTransport(self._handle)
        self.calls: list[Call] = []
        self._users: dict[int, FakeUser] = {}
        self._groups: dict[int, FakeGroup] = {}
        self._messages: dict[int, list[FakeMessage]] = {}
        self._next_message_id: dict[int, int] = {}
        self._update_ids = itertools.count(1)
        self._callback_ids = itertools.count(4_000_000_000_000_000_001)
        self._callbacks: dict[str, CallbackAnswer | None] = {}
        self._pending_updates: list[JSON] = []
        self._updates_event = asyncio.Event()
        self._injected: list[_Injected] = []
        self._commands: dict[tuple[str, str], list[JSON]] = {}
        self.latency: Callable[[str, JSON], Awaitable[None]] | None = None
        """Awaited with each authorised call's method and parameters before it is applied
        and answered: the time a call takes over the network (tests: which calls are on
        their way at once; the bot benchmark: Telegram's round trip)."""

    # -- wiring

    def request(self, **kwargs: Any) -> HTTPXRequest:
        """A fresh request object for the bot (its `JsonRequest`, a PTB `HTTPXRequest`) whose
        httpx client uses this fake as transport. ``plain=True``: PTB's own HTTPXRequest."""
        httpx_kwargs = {"transport": self.transport, **kwargs.pop("httpx_kwargs", {})}
        cls = HTTPXRequest if kwargs.pop("plain", False) else JsonRequest
        return cls(httpx_kwargs=httpx_kwargs, **kwargs)

    def updates_request(self) -> HTTPXRequest:
        """The request object for long polling, the bot's `UpdatesRequest` as in production."""
        return UpdatesRequest(httpx_kwargs={"transport": self.transport})

    def bot(self) -> Bot:
        """A plain ``telegram.Bot`` wired to the fake (call ``await bot.initialize()``)."""
        return Bot(self.token, request=self.request(), get_updates_request=self.updates_request())

    def make_application(
        self,
        builder_hook: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], Any]
        | None = None,
    ) -> AnyApplication:
        """``Application`` wired to the fake. ``builder_hook(builder)`` may configure the
        builder further (persistence, defaults, rate limiter...) before ``build()``;
        it may return a builder or None."""
        builder = (
            Application.builder()
            .token(self.token)
            .request(self.request())
            .get_updates_request(self.updates_request())
        )
        if builder_hook is not None:
            returned = builder_hook(builder)
            if returned is not None:
                builder = returned
        return builder.build()

    @property
    def bot_user(self) -> JSON:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.bot_first_name,
            "username": self.bot_username,
        }

    # -- people

    def user(
        self,
        user_id: int,
        first_name: str,
        language_code: str | None = "en",
        username: str | None = None,
        *,
        last_name: str | None = None,
    ) -> FakeUser:
        if user_id <= 0:
            raise ValueError("user ids are positive")
        user = FakeUser(
            self,
            user_id,
            first_name,
            language_code=language_code,
            username=username,
            last_name=last_name,
        )
        self._users[user_id] = user
        return user

    def group(
        self,
        chat_id: int,
        title: str,
        admins: Iterable[FakeUser | int] = (),
        members: Iterable[FakeUser | int] = (),
        *,
        owner: FakeUser | int | None = None,
        bot_admin: bool = False,
        chat_type: str | None = None,
        username: str | None = None,
    ) -> FakeGroup:
        group = FakeGroup(self, chat_id, title, chat_type=chat_type, username=username)
        for member in members:
            group.members[_user_ref(member)] = "member"
        for admin in admins:
            group.members[_user_ref(admin)] = "administrator"
        if owner is not None:
            group.members[_user_ref(owner)] = "creator"
        group.bot_status = "administrator" if bot_admin else "member"
        self._groups[chat_id] = group
        return group

    def chat(self, chat_id: int) -> FakeUser | FakeGroup:
        """The private chat (a FakeUser) or group with that id."""
        if chat_id in self._groups:
            return self._groups[chat_id]
        if chat_id in self._users:
            return self._users[chat_id]
        raise LookupError(f"unknown chat {chat_id}")

    # -- updates

    def _new_update(self, **payload: Any) -> JSON:
        return {"update_id": next(self._update_ids), **payload}

    def _member_change(self, chat: JSON, by: FakeUser, old_status: str, new_status: str) -> JSON:
        bot = {**self.bot_user, "is_bot": True}
        return {
            "chat": chat,
            "from": by.to_dict(),
            "date": self.clock(),
            "old_chat_member": self._member_dict(bot, old_status),
            "new_chat_member": self._member_dict(bot, new_status),
        }

    async def deliver(self, app: AnyApplication, *updates: JSON) -> None:
        """Process updates in the application directly, with no polling, but read as its
        getUpdates request reads a poll's answer (the bot's `UpdatesRequest` leaves out what
        it never reads). The application must be initialized (``async with app:``)."""
        read = app.bot._request[0].parse_json_payload  # the get_updates request's
        for update in updates:
            payload = orjson.dumps({"ok": True, "result": [update]})
            await app.process_update(Update.de_json(read(payload)["result"][0], app.bot))

    def queue(self, *updates: JSON) -> None:
        """Make updates available to getUpdates (long polling wakes up)."""
        self._pending_updates.extend(updates)
        self._updates_event.set()

    @property
    def pending_updates(self) -> list[JSON]:
        return list(self._pending_updates)

    # -- failure injection

    def fail_next(
        self,
        method: str,
        status: int = 400,
        description: str | None = None,
        retry_after: int | None = None,
        chat_id: int | str | None = None,
        *,
        times: int = 1,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (to ``chat_id`` if given) fail without
        side effects. 429 gets parameters.retry_after (default 5)."""
        parameters: JSON | None = None
        if status == 429:
            retry_after = 5 if retry_after is None else retry_after
            description = description or f"Too Many Requests: retry after {retry_after}"
            parameters = {"retry_after": retry_after}
        elif retry_after is not None:
            parameters = {"retry_after": retry_after}
        if migrate_to_chat_id is not None:
            parameters = {**(parameters or {}), "migrate_to_chat_id": migrate_to_chat_id}
        if description is None:
            description = {
                400: "Bad Request: injected failure",
                403: "Forbidden: bot was blocked by the user",
                409: "Conflict: terminated by other getUpdates request",
                500: "Internal Server Error",
                502: "Bad Gateway",
            }.get(status, f"Error {status}")
        self._injected.append(
            _Injected(
                _CANONICAL.get(method.lower(), method),
                chat_id,
                status=status,
                description=description,
                parameters=parameters,
                times=times,
            )
        )

    def timeout_next(
        self,
        method: str,
        chat_id: int | str | None = None,
        *,
        applied: bool = False,
        times: int = 1,
    ) -> None:
        """The next call of ``method`` raises httpx.ReadTimeout (PTB: telegram.error.TimedOut).
        ``applied=True``: the call takes effect first and only the response is lost."""
        self._injected.append(
            _Injected(
                _CANONICAL.get(method.lower(), method),
                chat_id,
                timeout=True,
                applied=applied,
                times=times,
            )
        )

    def _take_injected(self, method: str, params: JSON) -> _Injected | None:
        for injected in self._injected:
            if injected.method != method:
                continue
            if injected.chat_id is not None and params.get("chat_id") != injected.chat_id:
                continue
            injected.times -= 1
            if injected.times <= 0:
                self._injected.remove(injected)
            return injected
        return None

    # -- inspection

    def calls_for(self, method: str) -> list[Call]:
        name = _CANONICAL.get(method.lower(), method)
        return [c for c in self.calls if c.method == name]

    def count(self, method: str) -> int:
        return len(self.calls_for(method))

    @property
    def call_counts(self) -> Counter[str]:
        return Counter(c.method for c in self.calls)

    def clear_calls(self) -> None:
        self.calls.clear()

    def messages(
        self,
        chat_id: int,
        *,
        from_bot: bool | None = True,
        include_deleted: bool = False,
    ) -> list[FakeMessage]:
        """Messages of a chat in order. Default: the bot's, not deleted.
        ``from_bot=None`` gives everyone's."""
        return [
            m
            for m in self._messages.get(chat_id, [])
            if (from_bot is None or m.from_bot == from_bot) and (include_deleted or not m.deleted)
        ]

    def last_message(self, chat_id: int, *, from_bot: bool | None = True) -> FakeMessage:
        found = self.messages(chat_id, from_bot=from_bot)
        if not found:
            raise LookupError(f"no messages in chat {chat_id}")
        return found[-1]

    def message(self, chat_id: int, message_id: int) -> FakeMessage:
        return self._get_message(chat_id, message_id)

    def answer_for(self, update_or_query_id: JSON | str) -> CallbackAnswer | None:
        """The bot's answerCallbackQuery for a tap update (None if not answered yet)."""
        if isinstance(update_or_query_id, str):
            query_id = update_or_query_id
        else:
            query_id = update_or_query_id["callback_query"]["id"]
        if query_id not in self._callbacks:
            raise LookupError(f"unknown callback query {query_id}")
        return self._callbacks[query_id]

    def unanswered_callbacks(self) -> list[str]:
        return [qid for qid, answer in self._callbacks.items() if answer is None]

    def commands(self, scope: JSON | None = None, language_code: str = "") -> list[JSON]:
        return list(self._commands.get((self._scope_key(scope), language_code), []))

    # -- storage helpers

    def _store_message(
        self,
        chat_id: int,
        *,
        from_bot: bool,
        sender_id: int,
        text: str,
        html: str,
        parse_mode: str | None = None,
        entities: list[JSON] | None = None,
        reply_markup: JSON | None = None,
        reply_to_message_id: int | None = None,
        service: JSON | None = None,
    ) -> FakeMessage:
        message_id = self._next_message_id.get(chat_id, 1)
        self._next_message_id[chat_id] = message_id + 1
        msg = FakeMessage(
            chat_id=chat_id,
            message_id=message_id,
            from_bot=from_bot,
            sender_id=sender_id,
            date=self.clock(),
            text=text,
            html=html,
            parse_mode=parse_mode,
            entities=entities or [],
            reply_markup=reply_markup,
            reply_to_message_id=reply_to_message_id,
            service=service or {},
        )
        self._messages.setdefault(chat_id, []).append(msg)
        return msg

    def _get_message(self, chat_id: int, message_id: int) -> FakeMessage:
        for msg in self._messages.get(chat_id, []):
            if msg.message_id == message_id:
                return msg
        raise LookupError(f"no message {message_id} in chat {chat_id}")

    def _chat_dict(self, chat_id: int) -> JSON:
        return self.chat(chat_id).chat_dict()

    def _message_dict(self, msg: FakeMessage, *, with_reply: bool = True) -> JSON:
        if msg.from_bot:
            sender = self.bot_user
        elif msg.sender_id in self._users:
            sender = self._users[msg.sender_id].to_dict()
        else:
            sender = {"id": msg.sender_id, "is_bot": False, "first_name": str(msg.sender_id)}
        data: JSON = {
            "message_id": msg.message_id,
            "from": sender,
            "chat": self._chat_dict(msg.chat_id),
            "date": msg.date,
        }
        if msg.text:
            data["text"] = msg.text
        if msg.entities:
            data["entities"] = msg.entities
        if msg.reply_markup and "inline_keyboard" in msg.reply_markup:
            data["reply_markup"] = msg.reply_markup
        if msg.edit_date is not None:
            data["edit_date"] = msg.edit_date
        if with_reply and msg.reply_to_message_id is not None:
            try:
                replied = self._get_message(msg.chat_id, msg.reply_to_message_id)
            except LookupError:
                pass
            else:
                data["reply_to_message"] = self._message_dict(replied, with_reply=False)
        data.update(msg.service)
        return data

    def _member_dict(self, user: JSON, status: str) -> JSON:
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            return {
                "status": "administrator",
                "user": user,
                "can_be_edited": False,
                "is_anonymous": False,
                "can_manage_chat": True,
                "can_delete_messages": True,
                "can_manage_video_chats": True,
                "can_restrict_members": True,
                "can_promote_members": False,
                "can_change_info": True,
                "can_invite_users": True,
                "can_post_stories": False,
                "can_edit_stories": False,
                "can_delete_stories": False,
                "can_pin_messages": True,
            }
        if status == "kicked":
            return {"status": "kicked", "user": user, "until_date": 0}
        if status in ("restricted", "restricted-left"):  # muted; still in the group, or not
            rights = [
                "can_send_messages",
                "can_send_audios",
                "can_send_documents",
                "can_send_photos",
                "can_send_videos",
                "can_send_video_notes",
                "can_send_voice_notes",
                "can_send_polls",
                "can_send_other_messages",
                "can_add_web_page_previews",
                "can_change_info",
                "can_invite_users",
                "can_pin_messages",
                "can_manage_topics",
                "can_edit_tag",
                "can_react_to_messages",
            ]
            return {
                "status": "restricted",
                "user": user,
                "is_member": status == "restricted",
                "until_date": 0,
                **dict.fromkeys(rights, False),
            }
        return {"status": status, "user": user}

    # -- HTTP

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.host != "api.telegram.org":
            raise httpx.ConnectError(
                f"FakeTelegram: refusing to contact {request.url.host} (no network in tests)",
                request=request,
            )
        match = re.fullmatch(r"/bot([^/]+)/([A-Za-z0-9_]*)", request.url.path)
        if match is None:
            return self._error_response(404, "Not Found")
        token, raw_method = match.groups()
        method = _CANONICAL.get(raw_method.lower(), raw_method)
        try:
            params = self._parse_params(request)
        except _ApiError as exc:
            self.calls.append(Call(method, {}, False, None, exc.code, exc.description))
            return self._error_response(exc.code, exc.description)
        call = Call(method, params)
        self.calls.append(call)
        if token != self.token:
            return self._fail(call, _ApiError(401, "Unauthorized"))
        if self.latency is not None:
            await self.latency(method, params)

        injected = self._take_injected(method, params)
        if injected is not None:
            call.injected = True
            if injected.timeout and not injected.applied:
                call.timed_out = True
                raise httpx.ReadTimeout("FakeTelegram: injected timeout", request=request)
            if not injected.timeout:
                assert injected.status is not None
                assert injected.description is not None
                return self._fail(
                    call, _ApiError(injected.status, injected.description, injected.parameters)
                )

        handler = getattr(self, f"_api_{method}", None) if method in _METHODS else None
        if handler is None:
            return self._fail(call, _ApiError(404, "Not Found: method not found"))
        try:
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
        except _ApiError as exc:
            return self._fail(call, exc)

        call.ok = True
        call.result = result
        if injected is not None and injected.timeout:
            call.timed_out = True
            raise httpx.ReadTimeout("FakeTelegram: injected timeout after apply", request=request)
        return _json_response(200, {"ok": True, "result": result})

    def _fail(self, call: Call, exc: _ApiError) -> httpx.Response:
        call.ok = False
        call.error_code = exc.code
        call.description = exc.description
        return self._error_response(exc.code, exc.description, exc.parameters)

    @staticmethod
    def _error_response(
        code: int, description: str, parameters: JSON | None = None
    ) -> httpx.Response:
        body: JSON = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return _json_response(code, body)

    def _parse_params(self, request: httpx.Request) -> JSON:
        raw: dict[str, str] = dict(parse_qsl(request.url.query.decode(), keep_blank_values=True))
        read: JSON = {}  # JSON parameters of a JSON body, already read
        content_type = request.headers.get("content-type", "")
        body = request.content
        if body:
            if content_type.startswith("application/json"):
                decoded, exact = _read_json_body(body)
                if not isinstance(decoded, dict):
                    raise _ApiError(400, "Bad Request: JSON object expected")
                # As the Bot API reads a JSON body: a string is the parameter's text, as in a
                # form; any other value stands for its JSON text (a JSON parameter's object
                # is that text read already).
                for key, value in decoded.items():
                    if isinstance(value, str):
                        raw[key] = value
                    elif exact and key in _JSON_PARAMS and isinstance(value, dict | list):
                        read[key] = value
                    else:
                        raw[key] = json.dumps(value)
                if any(not _is_utf8(value) for value in raw.values()):  # a lone surrogate
                    raise _ApiError(400, "Bad Request: strings must be encoded in UTF-8")
            elif content_type.startswith("multipart/form-data"):
                raw.update(self._parse_multipart(content_type, body))
            else:
                raw.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        params = {name: self._convert(name, value) for name, value in raw.items()}
        params.update(read)
        return params

    @staticmethod
    def _parse_multipart(content_type: str, body: bytes) -> dict[str, str]:
        parser = email.parser.BytesParser(policy=email.policy.HTTP)
        message = parser.parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields: dict[str, str] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not isinstance(name, str):
                continue
            if part.get_filename():
                fields[name] = f"<file {part.get_filename()}>"
            else:
                payload = part.get_payload(decode=True)
                fields[name] = payload.decode("utf-8") if isinstance(payload, bytes) else ""
        return fields

    @staticmethod
    def _convert(name: str, value: str) -> Any:
        try:
            if name in _JSON_PARAMS:
                return _read_json_text(value)
            if name in _INT_PARAMS:
                return int(value)
            if name in _BOOL_PARAMS:
                return _parse_bool(value)
            if name == "chat_id":
                return int(value) if re.fullmatch(r"-?\d+", value) else value
        except ValueError as exc:
            if name == "reply_markup":
                raise _ApiError(
                    400, "Bad Request: can't parse reply keyboard markup JSON object"
                ) from exc
            raise _ApiError(400, f"Bad Request: invalid {name} specified") from exc
        return value

    # -- validation helpers

    def _resolve_chat(self, params: JSON, key: str = "chat_id") -> FakeUser | FakeGroup:
        raw = params.get(key)
        if raw is None or raw == "":
            raise _ApiError(400, f"Bad Request: {key} is empty")
        if isinstance(raw, str):
            for group in self._groups.values():
                if group.username and f"@{group.username}".lower() == raw.lower():
                    return group
            raise _ApiError(400, "Bad Request: chat not found")
        try:
            return self.chat(raw)
        except LookupError:
            raise _ApiError(400, "Bad Request: chat not found") from None

    @staticmethod
    def _group_word(group: FakeGroup) -> str:
        return "supergroup chat" if group.type == "supergroup" else "group chat"

    def _check_access(self, chat: FakeUser | FakeGroup, *, sending: bool = True) -> None:
        """Raise what Telegram answers when the bot cannot write to / act in the chat."""
        if isinstance(chat, FakeUser):
            if chat.blocked:
                raise _ApiError(403, "Forbidden: bot was blocked by the user")
            if sending and not chat.started:
                raise _ApiError(403, "Forbidden: bot can't initiate conversation with a user")
            return
        if chat.migrated_to is not None:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to.id},
            )
        if chat.bot_status == "kicked":
            raise _ApiError(403, f"Forbidden: bot was kicked from the {self._group_word(chat)}")
        if chat.bot_status == "left":
            raise _ApiError(403, f"Forbidden: bot is not a member of the {self._group_word(chat)}")

    def _render_text(
        self, params: JSON, *, key: str = "text"
    ) -> tuple[str, str, str | None, list[JSON]]:
        """Validate text + parse_mode; returns (plain, html, parse_mode, entities)."""
        source = params.get(key)
        if source is None or source == "":
            raise _ApiError(400, "Bad Request: message text is empty")
        source = str(source)
        parse_mode = params.get("parse_mode") or None
        if parse_mode is not None:
            if str(parse_mode).lower() != "html":
                if str(parse_mode).lower() in ("markdown", "markdownv2"):
                    raise _ApiError(
                        400,
                        f"Bad Request: FakeTelegram only implements parse_mode HTML, "
                        f"not {parse_mode}",
                    )
                raise _ApiError(400, f"Bad Request: unsupported parse_mode {parse_mode}")
            try:
                plain, entities = parse_html(source, strict=self.strict_html)
            except HtmlParseError as exc:
                raise _ApiError(400, f"Bad Request: can't parse entities: {exc}") from None
            html_source = source
            parse_mode = "HTML"
        else:
            plain = source
            entities = list(params.get("entities") or [])
            html_source = html_lib.escape(source, quote=False)
        plain, entities = strip_text(plain, entities)
        if not plain:
            raise _ApiError(400, "Bad Request: message text is empty")
        if len(plain) > MAX_TEXT_LENGTH:
            raise _ApiError(400, "Bad Request: message is too long")
        return plain, html_source, parse_mode, entities

    @staticmethod
    def _validate_markup(markup: Any, *, inline_only: bool) -> JSON | None:
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise _ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            if inline_only:
                raise _ApiError(400, "Bad Request: inline keyboard expected")
            return markup
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise _ApiError(400, "Bad Request: can't parse inline keyboard button: expected array")
        total = 0
        for row in rows:
            for button in row:
                total += 1
                if not isinstance(button, dict) or not button.get("text"):
                    raise _ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: Text must be non-empty",
                    )
                actions = [a for a in _BUTTON_ACTIONS if a in button]
                if not actions:
                    raise _ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: Text buttons are "
                        "unallowed in the inline keyboard",
                    )
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not (
                        1 <= len(data.encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES
                    ):
                        raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                if "url" in button:
                    url = str(button["url"])
                    if not re.match(r"(https?|tg)://\S+$", url, re.IGNORECASE):
                        raise _ApiError(
                            400,
                            f"Bad Request: inline keyboard button URL '{url}' is invalid: "
                            "Wrong HTTP URL",
                        )
        if total > MAX_INLINE_BUTTONS:
            raise _ApiError(400, "Bad Request: reply markup is too long")
        return {"inline_keyboard": rows} if rows else None

    def _editable(self, params: JSON) -> tuple[FakeUser | FakeGroup, FakeMessage]:
        if params.get("inline_message_id"):
            raise _ApiError(400, "Bad Request: FakeTelegram does not implement inline messages")
        chat = self._resolve_chat(params)
        self._check_access(chat, sending=False)
        message_id = params.get("message_id")
        if message_id is None:
            raise _ApiError(400, "Bad Request: message identifier is not specified")
        try:
            msg = self._get_message(chat.id, message_id)
        except LookupError:
            raise _ApiError(400, "Bad Request: message to edit not found") from None
        if msg.deleted:
            raise _ApiError(400, "Bad Request: message to edit not found")
        if not msg.from_bot or msg.service:
            raise _ApiError(400, "Bad Request: message can't be edited")
        return chat, msg

    # -- API methods

    def _api_getMe(self, params: JSON) -> JSON:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    def _api_sendMessage(self, params: JSON) -> JSON:
        chat = self._resolve_chat(params)
        self._check_access(chat)
        plain, source, parse_mode, entities = self._render_text(params)
        markup = self._validate_markup(params.get("reply_markup"), inline_only=False)
        reply_to = params.get("reply_to_message_id")
        allow_without = bool(params.get("allow_sending_without_reply"))
        reply_parameters = params.get("reply_parameters")
        if isinstance(reply_parameters, dict):
            reply_to = reply_parameters.get("message_id")
            allow_without = bool(reply_parameters.get("allow_sending_without_reply"))
        if reply_to is not None:
            try:
                replied = self._get_message(chat.id, int(reply_to))
                if replied.deleted:
                    raise LookupError
            except LookupError:
                if not allow_without:
                    raise _ApiError(400, "Bad Request: message to be replied not found") from None
                reply_to = None
        msg = self._store_message(
            chat.id,
            from_bot=True,
            sender_id=self.bot_id,
            text=plain,
            html=source,
            parse_mode=parse_mode,
            entities=entities,
            reply_markup=markup,
            reply_to_message_id=reply_to,
        )
        return self._message_dict(msg)

    def _apply_edit(
        self,
        msg: FakeMessage,
        plain: str,
        source: str,
        parse_mode: str | None,
        entities: list[JSON],
        markup: JSON | None,
    ) -> JSON:
        if plain == msg.text and entities == msg.entities and markup == msg.reply_markup:
            raise _ApiError(400, NOT_MODIFIED)
        msg.history.append((msg.html, msg.reply_markup))
        msg.text, msg.html, msg.parse_mode, msg.entities = plain, source, parse_mode, entities
        msg.reply_markup = markup
        msg.edit_date = self.clock()
        return self._message_dict(msg)

    def _api_editMessageText(self, params: JSON) -> JSON:
        plain, source, parse_mode, entities = self._render_text(params)
        markup = self._validate_markup(params.get("reply_markup"), inline_only=True)
        _, msg = self._editable(params)
        # Like Telegram: omitting reply_markup removes the inline keyboard.
        return self._apply_edit(msg, plain, source, parse_mode, entities, markup)

    def delete_by_user(self, chat_id: int, message_id: int) -> None:
        """Someone (an admin of the group, or the user in a private chat) deletes a message:
        later edits of it fail with "message to edit not found"."""
        self._get_message(chat_id, message_id).deleted = True

    def _api_answerCallbackQuery(self, params: JSON) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if query_id not in self._callbacks or self._callbacks[query_id] is not None:
            raise _ApiError(400, QUERY_TOO_OLD)
        text = params.get("text")
        if text is not None and len(str(text)) > MAX_CALLBACK_ANSWER_LENGTH:
            raise _ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self._callbacks[query_id] = CallbackAnswer(
            text=None if text is None else str(text),
            show_alert=bool(params.get("show_alert", False)),
            url=params.get("url"),
            cache_time=params.get("cache_time"),
        )
        return True

    def _api_getChatMember(self, params: JSON) -> JSON:
        chat = self._resolve_chat(params)
        self._check_access(chat, sending=False)
        user_id = params.get("user_id")
        if user_id is None:
            raise _ApiError(400, "Bad Request: user_id is empty")
        if user_id == self.bot_id:
            status = "member" if isinstance(chat, FakeUser) else chat.bot_status
            return self._member_dict(self.bot_user, status)
        if user_id not in self._users:
            raise _ApiError(400, "Bad Request: user not found")
        user = self._users[user_id]
        if isinstance(chat, FakeUser):
            if chat.id != user_id:
                raise _ApiError(400, "Bad Request: user not found")
            return self._member_dict(user.to_dict(), "member")
        return self._member_dict(user.to_dict(), chat.status_of(user_id))

    @staticmethod
    def _scope_key(scope: Any) -> str:
        return json.dumps(scope or {"type": "default"}, sort_keys=True)

    def _api_setMyCommands(self, params: JSON) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise _ApiError(400, "Bad Request: commands list is invalid")
        for command in commands:
            if not isinstance(command, dict):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not _BOT_COMMAND_NAME.fullmatch(str(command.get("command", ""))):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise _ApiError(400, "Bad Request: command description is empty or too long")
        key = (self._scope_key(params.get("scope")), str(params.get("language_code") or ""))
        self._commands[key] = [
            {"command": c["command"], "description": c["description"]} for c in commands
        ]
        return True

    def _deliverable(self, allowed: Sequence[str] | None) -> list[JSON]:
        def kind(update: JSON) -> str:
            return next((k for k in _UPDATE_KINDS if k in update), "")

        if allowed:
            return [u for u in self._pending_updates if kind(u) in allowed]
        return [u for u in self._pending_updates if kind(u) not in _DEFAULT_EXCLUDED_UPDATES]

    async def _api_getUpdates(self, params: JSON) -> list[JSON]:
        offset = params.get("offset") or 0
        if offset > 0:  # confirm everything before the offset
            self._pending_updates = [u for u in self._pending_updates if u["update_id"] >= offset]
        limit = min(max(params.get("limit") or 100, 1), 100)
        wait = float(params.get("timeout") or 0)
        allowed = params.get("allowed_updates")
        updates = self._deliverable(allowed)
        if not updates and wait > 0:
            self._updates_event.clear()
            # Telegram's long poll: answer as soon as something arrives, else after `wait`
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._updates_event.wait(), wait)
            updates = self._deliverable(allowed)
        return updates[:limit]

    def _api_deleteWebhook(self, params: JSON) -> bool:
        if params.get("drop_pending_updates"):
            self._pending_updates.clear()
        return True
