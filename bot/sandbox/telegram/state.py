"""What the fake keeps: chats and their members, messages with their keyboards and edits,
callback queries and their answers, command menus, pending updates, the webhook (`Webhook`)
and the call log.

`FakeState` holds all of it, with the inspection methods tests use (``messages``,
``last_message``, ``answer_for``, ``calls_for``, ``commands``..., and ``watch``, which calls
back on every new, edited or deleted message) and the JSON Telegram shows
of what it keeps (a message, a chat member, a ``my_chat_member`` change). The Bot API methods
(`methods`) change it; the simulated people (`scenarios`) add their messages and taps to it;
`tests.fakes.webhook` posts its pending updates to a webhook and takes back the ones answered
(``watch_updates``, ``delivered``, ``webhook_failed``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from bot.sandbox.telegram.scenarios import FakeGroup, FakeUser, user_ref

JSON = dict[str, Any]
Change = Literal["new", "edited", "deleted"]
"""What happened to a stored message (`FakeState.watch`)."""

TOKEN = "123:TEST"
BOT_USERNAME = "durak_test_bot"


class Button(NamedTuple):
    """One inline keyboard button as stored on a message."""

    text: str
    callback_data: str | None
    url: str | None
    style: str | None = None  # primary (blue), success (green), danger (red); None: plain


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
    via: str | None = None  # which bot process made it, where it says (`LoopbackBotAPI.url_for`)
    at: float = field(default_factory=time.time)  # when it arrived (the wall clock)

    @property
    def chat_id(self) -> int | str | None:
        value = self.params.get("chat_id")
        return value if isinstance(value, int | str) else None


@dataclass
class Webhook:
    """The webhook `setWebhook` set, as Telegram keeps it (`getWebhookInfo` shows it)."""

    url: str
    secret_token: str | None  # sent as X-Telegram-Bot-Api-Secret-Token; None: no header
    max_connections: int
    has_custom_certificate: bool = False
    ip_address: str | None = None
    last_error_date: int | None = None  # the last failed delivery (`webhook_failed`)
    last_error_message: str | None = None


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
    notified: bool = False  # a new message without disable_notification: the phone announces it
    history: list[tuple[str, JSON | None]] = field(default_factory=list)  # (html, markup)
    service: JSON = field(default_factory=dict)  # e.g. {"migrate_to_chat_id": ...}

    @property
    def edits(self) -> int:
        return len(self.history)

    @property
    def buttons(self) -> list[list[Button]]:
        """Inline keyboard as rows of (text, callback_data, url, style); [] without a keyboard."""
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [
            [
                Button(b.get("text", ""), b.get("callback_data"), b.get("url"), b.get("style"))
                for b in row
            ]
            for row in rows
        ]

    @property
    def button_texts(self) -> list[str]:
        return [b.text for row in self.buttons for b in row]

    def button(self, text_or_data: str) -> Button:
        """Find a button by exact callback_data first, then by exact label, then by label
        as a person reads it: "6♥" finds "6♥️" (a red suit in emoji presentation)."""
        flat = [b for row in self.buttons for b in row]
        for b in flat:
            if b.callback_data == text_or_data:
                return b
        for b in flat:
            if b.text == text_or_data:
                return b
        for b in flat:
            if b.text.replace("\ufe0f", "") == text_or_data.replace("\ufe0f", ""):
                return b
        raise LookupError(
            f"no button {text_or_data!r} on message {self.message_id} in chat {self.chat_id}; "
            f"buttons: {[(b.text, b.callback_data) for b in flat]}"
        )


def scope_key(scope: Any) -> str:
    """The key of a command menu's scope (`setMyCommands`): its JSON, the default scope's if
    none."""
    return json.dumps(scope or {"type": "default"}, sort_keys=True)


class FakeState:
    """Everything the fake Bot API keeps, and what tests read of it."""

    _method_names: ClassVar[Mapping[str, str]] = {}
    """Lower-cased method name -> the name the call log keeps (`methods` fills this in)."""

    def __init__(
        self,
        *,
        token: str,
        bot_username: str,
        bot_first_name: str,
        clock: Callable[[], int] | None,
    ) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.bot_first_name = bot_first_name
        self.clock: Callable[[], int] = clock or (lambda: int(time.time()))
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
        self._commands: dict[tuple[str, str], list[JSON]] = {}
        self._watchers: list[Callable[[FakeMessage, Change], None]] = []
        self.webhook: Webhook | None = None  # set by setWebhook, None: getUpdates works
        self.allowed_updates: list[str] | None = None  # the webhook's; None: Telegram's default
        self._update_watchers: list[Callable[[], None]] = []

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
            group.members[user_ref(member)] = "member"
        for admin in admins:
            group.members[user_ref(admin)] = "administrator"
        if owner is not None:
            group.members[user_ref(owner)] = "creator"
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

    def queue(self, *updates: JSON) -> None:
        """Make updates available to getUpdates (long polling wakes up), or to the webhook."""
        self._pending_updates.extend(updates)
        self._updates_event.set()
        self._updates_changed()

    @property
    def pending_updates(self) -> list[JSON]:
        return list(self._pending_updates)

    def watch_updates(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call `watcher()` whenever updates are queued or the webhook is set or deleted (a
        `tests.fakes.webhook.WebhookDelivery` wakes up). Returns the function that stops it."""
        self._update_watchers.append(watcher)
        return lambda: self._update_watchers.remove(watcher)

    def _updates_changed(self) -> None:
        for watcher in list(self._update_watchers):
            watcher()

    def delivered(self, update_id: int) -> None:
        """The webhook answered the update 2xx: it is no longer pending (Telegram forgets it)."""
        self._pending_updates = [u for u in self._pending_updates if u["update_id"] != update_id]

    def webhook_failed(self, message: str) -> None:
        """A delivery failed: `getWebhookInfo` shows it as the last error, dated now."""
        if self.webhook is not None:
            self.webhook.last_error_date = self.clock()
            self.webhook.last_error_message = message

    # -- inspection

    def watch(self, watcher: Callable[[FakeMessage, Change], None]) -> Callable[[], None]:
        """Call `watcher(message, change)` whenever a message is stored ("new": the bot's or
        someone's), edited or deleted, right after the change, with the live message (its
        text and keyboard as they are now); a refused call changes nothing and calls nothing.
        Returns the function that stops the watching. (The bot benchmark's simulated players
        see their hands change this way, at the moment Telegram would show it.)"""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher)

    def _changed(self, msg: FakeMessage, change: Change) -> None:
        for watcher in list(self._watchers):
            watcher(msg, change)

    def _method_name(self, method: str) -> str:
        """A method's name as the call log keeps it: as the fake spells it if it answers the
        method (Telegram's method names are case-insensitive), else as given."""
        return self._method_names.get(method.lower(), method)

    def calls_for(self, method: str) -> list[Call]:
        name = self._method_name(method)
        return [c for c in self.calls if c.method == name]

    def count(self, method: str) -> int:
        return len(self.calls_for(method))

    @property
    def call_counts(self) -> Counter[str]:
        return Counter(c.method for c in self.calls)

    def clear_calls(self) -> None:
        self.calls.clear()

    def notifications(self, chat_id: int) -> list[FakeMessage]:
        """The bot's messages in the chat that made the phone announce them (deleted since
        or not), in order: Telegram notifies on a new message, never on an edit."""
        return [m for m in self.messages(chat_id, include_deleted=True) if m.notified]

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
        return list(self._commands.get((scope_key(scope), language_code), []))

    def delete_by_user(self, chat_id: int, message_id: int) -> None:
        """Someone (an admin of the group, or the user in a private chat) deletes a message:
        later edits of it fail with "message to edit not found"."""
        msg = self._get_message(chat_id, message_id)
        msg.deleted = True
        self._changed(msg, "deleted")

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
        notified: bool = False,
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
            notified=notified,
        )
        self._messages.setdefault(chat_id, []).append(msg)
        self._changed(msg, "new")
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
