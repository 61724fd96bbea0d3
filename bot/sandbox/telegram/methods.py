"""The Bot API methods the fake answers, each refusing what Telegram refuses.

What the bot calls: ``sendMessage`` (replies through ``reply_parameters`` too),
``editMessageText``, ``answerCallbackQuery``, ``getChatMember`` and ``setMyCommands``; what
python-telegram-bot calls to start and poll: ``getMe``, ``deleteWebhook``, ``getUpdates``;
and the webhook's: ``setWebhook``, ``getWebhookInfo`` (the posting itself is
`tests.fakes.webhook`). Any other method is answered "Not Found: method not found" (as Telegram
answers a method it does not know): one the bot starts to call is added to `METHODS` and
implemented here. Each method is `BotApiMethods._api_<name>`, taking the parameters as
`transport` read them and raising `ApiError` with Telegram's error code and description: a
no-op edit ("message is not modified"), callback data over 64 bytes, a button ``style``
other than primary, success or danger, HTML Telegram would not parse, a blocked user, a
kicked bot, a migrated group...

The webhook methods follow Telegram's own server (tdlib/telegram-bot-api): ``setWebhook``
refuses a URL that is not https on port 443, 80, 88 or 8443 and a secret token of more than
256 characters or of others than A-Z, a-z, 0-9, ``_`` and ``-``, answers 429 (retry after 1)
to a second setting within a second, clamps ``max_connections`` to 1..100 (40 if not given)
and keeps ``allowed_updates`` when not given; an empty URL deletes the webhook. While one is
set, ``getUpdates`` answers 409, and a long poll waiting when it is set is ended with 409.
One leniency, for tests on loopback: a URL on 127.0.0.1, ::1 or localhost is taken over
http and on any port (Telegram refuses it: http, and a reserved address).
"""

from __future__ import annotations

import asyncio
import contextlib
import html as html_lib
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from bot.sandbox.telegram.html import HtmlParseError, parse_html, strip_text
from bot.sandbox.telegram.scenarios import FakeGroup, FakeUser
from bot.sandbox.telegram.state import (
    JSON,
    CallbackAnswer,
    FakeMessage,
    FakeState,
    Webhook,
    scope_key,
)

MAX_TEXT_LENGTH = 4096
MAX_CALLBACK_DATA_BYTES = 64
MAX_CALLBACK_ANSWER_LENGTH = 200
MAX_INLINE_BUTTONS = 100
BUTTON_STYLES = frozenset({"primary", "success", "danger"})
"""The values Telegram takes for an inline button's ``style`` (Bot API 9.4: blue, green, red;
python-telegram-bot's ``constants.KeyboardButtonStyle``). Its aliases BLUE, GREEN and RED are
Python names for the same three strings, not values of their own."""

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete "
    "the webhook first"
)
WEBHOOK_PORTS = frozenset({443, 80, 88, 8443})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""Hosts whose webhook URL the fake takes over http and on any port (Telegram does not)."""
DEFAULT_MAX_CONNECTIONS = 40
MAX_CONNECTIONS = 100
MAX_SECRET_TOKEN_LENGTH = 256

METHODS = (
    "getMe",
    "sendMessage",
    "editMessageText",
    "deleteMessage",
    "answerCallbackQuery",
    "getChatMember",
    "setMyCommands",
    "getUpdates",
    "deleteWebhook",
    "setWebhook",
    "getWebhookInfo",
)
"""The methods the fake answers, as Telegram spells them (`BotApiMethods._api_<name>`)."""

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
_BOT_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]*")
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


class ApiError(Exception):
    """A method's refusal: Telegram's error code, description and parameters."""

    def __init__(self, code: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


class BotApiMethods(FakeState):
    """The Bot API methods over the kept state (`FakeState`)."""

    _method_names: ClassVar[Mapping[str, str]] = {name.lower(): name for name in METHODS}
    strict_html: bool = True
    """Refuse HTML that Telegram itself takes literally (a bare ``&``, attributes a tag does
    not allow); False: only what Telegram refuses."""
    set_webhook_interval: int = 1
    """Seconds (of the fake's clock) before setWebhook with a URL may be called again: sooner
    is answered 429, retry after 1, as Telegram does (several workers setting the same
    webhook at start meet it); 0: never."""
    _next_set_webhook: int | None = None

    # -- validation helpers

    def _resolve_chat(self, params: JSON, key: str = "chat_id") -> FakeUser | FakeGroup:
        raw = params.get(key)
        if raw is None or raw == "":
            raise ApiError(400, f"Bad Request: {key} is empty")
        if isinstance(raw, str):
            for group in self._groups.values():
                if group.username and f"@{group.username}".lower() == raw.lower():
                    return group
            raise ApiError(400, "Bad Request: chat not found")
        try:
            return self.chat(raw)
        except LookupError:
            raise ApiError(400, "Bad Request: chat not found") from None

    @staticmethod
    def _group_word(group: FakeGroup) -> str:
        return "supergroup chat" if group.type == "supergroup" else "group chat"

    def _check_access(self, chat: FakeUser | FakeGroup, *, sending: bool = True) -> None:
        """Raise what Telegram answers when the bot cannot write to / act in the chat."""
        if isinstance(chat, FakeUser):
            if chat.blocked:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            if sending and not chat.started:
                raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
            return
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to.id},
            )
        if chat.bot_status == "kicked":
            raise ApiError(403, f"Forbidden: bot was kicked from the {self._group_word(chat)}")
        if chat.bot_status == "left":
            raise ApiError(403, f"Forbidden: bot is not a member of the {self._group_word(chat)}")

    def _render_text(
        self, params: JSON, *, key: str = "text"
    ) -> tuple[str, str, str | None, list[JSON]]:
        """Validate text + parse_mode; returns (plain, html, parse_mode, entities)."""
        source = params.get(key)
        if source is None or source == "":
            raise ApiError(400, "Bad Request: message text is empty")
        source = str(source)
        parse_mode = params.get("parse_mode") or None
        if parse_mode is not None:
            if str(parse_mode).lower() != "html":
                if str(parse_mode).lower() in ("markdown", "markdownv2"):
                    raise ApiError(
                        400,
                        f"Bad Request: FakeTelegram only implements parse_mode HTML, "
                        f"not {parse_mode}",
                    )
                raise ApiError(400, f"Bad Request: unsupported parse_mode {parse_mode}")
            try:
                plain, entities = parse_html(source, strict=self.strict_html)
            except HtmlParseError as exc:
                raise ApiError(400, f"Bad Request: can't parse entities: {exc}") from None
            html_source = source
            parse_mode = "HTML"
        else:
            plain = source
            entities = list(params.get("entities") or [])
            html_source = html_lib.escape(source, quote=False)
        plain, entities = strip_text(plain, entities)
        if not plain:
            raise ApiError(400, "Bad Request: message text is empty")
        if len(plain) > MAX_TEXT_LENGTH:
            raise ApiError(400, "Bad Request: message is too long")
        return plain, html_source, parse_mode, entities

    @staticmethod
    def _validate_markup(markup: Any, *, inline_only: bool) -> JSON | None:
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            if inline_only:
                raise ApiError(400, "Bad Request: inline keyboard expected")
            return markup
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise ApiError(400, "Bad Request: can't parse inline keyboard button: expected array")
        total = 0
        for row in rows:
            for button in row:
                total += 1
                if not isinstance(button, dict) or not button.get("text"):
                    raise ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: Text must be non-empty",
                    )
                actions = [a for a in _BUTTON_ACTIONS if a in button]
                if not actions:
                    raise ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: Text buttons are "
                        "unallowed in the inline keyboard",
                    )
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not (
                        1 <= len(data.encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES
                    ):
                        raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                if "style" in button and button["style"] not in BUTTON_STYLES:
                    # (Telegram's wording for this case is not documented: the fake's own)
                    raise ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: "
                        f"unsupported button style {button['style']!r}",
                    )
                if "url" in button:
                    url = str(button["url"])
                    if not re.match(r"(https?|tg)://\S+$", url, re.IGNORECASE):
                        raise ApiError(
                            400,
                            f"Bad Request: inline keyboard button URL '{url}' is invalid: "
                            "Wrong HTTP URL",
                        )
        if total > MAX_INLINE_BUTTONS:
            raise ApiError(400, "Bad Request: reply markup is too long")
        return {"inline_keyboard": rows} if rows else None

    @staticmethod
    def _check_web_apps(chat: FakeUser | FakeGroup, markup: JSON | None) -> None:
        """A `web_app` button opens a Mini App at an https URL, in private chats only (a
        group gets the app's direct link as a `url` button instead)."""
        for row in (markup or {}).get("inline_keyboard") or []:
            for button in row:
                if "web_app" not in button:
                    continue
                if isinstance(chat, FakeGroup):
                    raise ApiError(400, "Bad Request: BUTTON_TYPE_INVALID")
                url = str((button["web_app"] or {}).get("url", ""))
                if not url.lower().startswith("https://"):
                    raise ApiError(
                        400,
                        f"Bad Request: inline keyboard button Web App URL '{url}' is invalid: "
                        "Only HTTPS links are allowed",
                    )

    def _editable(self, params: JSON) -> tuple[FakeUser | FakeGroup, FakeMessage]:
        if params.get("inline_message_id"):
            raise ApiError(400, "Bad Request: FakeTelegram does not implement inline messages")
        chat = self._resolve_chat(params)
        self._check_access(chat, sending=False)
        message_id = params.get("message_id")
        if message_id is None:
            raise ApiError(400, "Bad Request: message identifier is not specified")
        try:
            msg = self._get_message(chat.id, message_id)
        except LookupError:
            raise ApiError(400, "Bad Request: message to edit not found") from None
        if msg.deleted:
            raise ApiError(400, "Bad Request: message to edit not found")
        if not msg.from_bot or msg.service:
            raise ApiError(400, "Bad Request: message can't be edited")
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
        self._check_web_apps(chat, markup)
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
                    raise ApiError(400, "Bad Request: message to be replied not found") from None
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
            notified=not params.get("disable_notification"),
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
            raise ApiError(400, NOT_MODIFIED)
        msg.history.append((msg.html, msg.reply_markup))
        msg.text, msg.html, msg.parse_mode, msg.entities = plain, source, parse_mode, entities
        msg.reply_markup = markup
        msg.edit_date = self.clock()
        self._changed(msg, "edited")
        return self._message_dict(msg)

    def _api_editMessageText(self, params: JSON) -> JSON:
        plain, source, parse_mode, entities = self._render_text(params)
        markup = self._validate_markup(params.get("reply_markup"), inline_only=True)
        chat, msg = self._editable(params)
        self._check_web_apps(chat, markup)
        # Like Telegram: omitting reply_markup removes the inline keyboard.
        return self._apply_edit(msg, plain, source, parse_mode, entities, markup)

    def _api_deleteMessage(self, params: JSON) -> bool:
        """Telegram lets a bot delete its own messages (in groups within 48 hours; the fake
        keeps no age: inject "message can't be deleted" with `fail_next`)."""
        chat = self._resolve_chat(params)
        self._check_access(chat, sending=False)
        try:
            msg = self._get_message(chat.id, int(params.get("message_id") or 0))
        except LookupError:
            raise ApiError(400, "Bad Request: message to delete not found") from None
        if msg.deleted:
            raise ApiError(400, "Bad Request: message to delete not found")
        if not msg.from_bot:
            raise ApiError(400, "Bad Request: message can't be deleted")
        msg.deleted = True
        self._changed(msg, "deleted")
        return True

    def _api_answerCallbackQuery(self, params: JSON) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if query_id not in self._callbacks or self._callbacks[query_id] is not None:
            raise ApiError(400, QUERY_TOO_OLD)
        text = params.get("text")
        if text is not None and len(str(text)) > MAX_CALLBACK_ANSWER_LENGTH:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
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
            raise ApiError(400, "Bad Request: user_id is empty")
        if user_id == self.bot_id:
            status = "member" if isinstance(chat, FakeUser) else chat.bot_status
            return self._member_dict(self.bot_user, status)
        if user_id not in self._users:
            raise ApiError(400, "Bad Request: user not found")
        user = self._users[user_id]
        if isinstance(chat, FakeUser):
            if chat.id != user_id:
                raise ApiError(400, "Bad Request: user not found")
            return self._member_dict(user.to_dict(), "member")
        return self._member_dict(user.to_dict(), chat.status_of(user_id))

    def _api_setMyCommands(self, params: JSON) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise ApiError(400, "Bad Request: commands list is invalid")
        for command in commands:
            if not isinstance(command, dict):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not _BOT_COMMAND_NAME.fullmatch(str(command.get("command", ""))):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise ApiError(400, "Bad Request: command description is empty or too long")
        key = (scope_key(params.get("scope")), str(params.get("language_code") or ""))
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
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_ACTIVE)
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
            if self.webhook is not None:  # setWebhook ends a waiting long poll
                raise ApiError(409, "Conflict: terminated by setWebhook request")
            updates = self._deliverable(allowed)
        return updates[:limit]

    def webhook_updates(self) -> list[JSON]:
        """The pending updates a webhook is sent (of its `allowed_updates`), in order."""
        return self._deliverable(self.allowed_updates)

    def _api_deleteWebhook(self, params: JSON) -> bool:
        if params.get("drop_pending_updates"):
            self._pending_updates.clear()
        self.webhook = None
        self._updates_changed()
        return True

    def _api_setWebhook(self, params: JSON) -> bool:
        url = str(params.get("url") or "")
        if not url:  # "use an empty string to remove webhook integration"
            return self._api_deleteWebhook(params)
        now = self.clock()
        if self._next_set_webhook is not None and now < self._next_set_webhook:
            raise ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1})
        self._next_set_webhook = now + self.set_webhook_interval
        self._check_webhook_url(url)
        secret = str(params.get("secret_token") or "")
        if len(secret) > MAX_SECRET_TOKEN_LENGTH:
            raise ApiError(400, "Bad Request: secret token is too long")
        if not _SECRET_TOKEN.fullmatch(secret):
            raise ApiError(400, "Bad Request: secret token contains unallowed characters")
        raw_connections = params.get("max_connections")
        max_connections = (
            DEFAULT_MAX_CONNECTIONS
            if raw_connections is None
            else min(max(int(raw_connections), 1), MAX_CONNECTIONS)
        )
        allowed = params.get("allowed_updates")
        if allowed is not None:  # not given: the previous setting stays
            if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
                raise ApiError(400, "Bad Request: can't parse allowed updates JSON object")
            self.allowed_updates = [a for a in _UPDATE_KINDS if a in allowed] or None
        webhook = Webhook(
            url=url,
            secret_token=secret or None,
            max_connections=max_connections,
            has_custom_certificate=params.get("certificate") is not None,
            ip_address=params.get("ip_address") or None,
        )
        current = self.webhook
        drop = bool(params.get("drop_pending_updates"))
        if current is not None and not drop and not webhook.has_custom_certificate:
            unchanged = (current.url, current.secret_token, current.max_connections) == (
                webhook.url,
                webhook.secret_token,
                webhook.max_connections,
            )
            if unchanged and current.ip_address == webhook.ip_address:
                return True  # "Webhook is already set": its last error stays
        if drop:
            self._pending_updates.clear()
        self.webhook = webhook
        self._updates_event.set()  # a waiting long poll ends (409)
        self._updates_changed()
        return True

    @staticmethod
    def _check_webhook_url(url: str) -> None:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise ApiError(400, "Bad Request: invalid webhook URL specified") from None
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ApiError(400, "Bad Request: invalid webhook URL specified")
        if parts.hostname.lower() in LOOPBACK_HOSTS:
            return  # the fake's leniency: a test's own server on loopback
        if parts.scheme.lower() != "https":
            raise ApiError(
                400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
            )
        if (port or 443) not in WEBHOOK_PORTS:
            raise ApiError(
                400,
                "Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443",
            )

    def _api_getWebhookInfo(self, params: JSON) -> JSON:
        """As Telegram answers: the optional fields only when they say something."""
        webhook = self.webhook
        info: JSON = {
            "url": webhook.url if webhook is not None else "",
            "has_custom_certificate": webhook is not None and webhook.has_custom_certificate,
            "pending_update_count": len(self.webhook_updates()),
        }
        if webhook is not None:
            if webhook.last_error_date is not None:
                info["last_error_date"] = webhook.last_error_date
                info["last_error_message"] = webhook.last_error_message
            info["max_connections"] = webhook.max_connections
            if webhook.ip_address is not None:
                info["ip_address"] = webhook.ip_address
        if self.allowed_updates is not None:
            info["allowed_updates"] = list(self.allowed_updates)
        return info
