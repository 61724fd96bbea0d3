"""Simulated users and groups: what people do in Telegram, as the updates it would send.

`FakeUser` writes messages and commands, taps the buttons of a message's current keyboard,
starts, blocks and unblocks the bot, joins and leaves groups. `FakeGroup` keeps its members'
statuses and the bot's, and makes the service messages and ``my_chat_member`` updates of
kicks, the bot's removal or return, and a basic group's migration to a supergroup. Each
method returns the update as a dict (JSON as Telegram sends it), for ``FakeTelegram.deliver``
or ``FakeTelegram.queue``; the messages they make are kept by the fake (`state`).
"""

from __future__ import annotations

import html as html_lib
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: `state` imports this module
    from bot.sandbox.telegram.state import JSON, FakeMessage, FakeState

COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,64})?")


def user_ref(user: FakeUser | int) -> int:
    return user if isinstance(user, int) else user.id


class FakeUser:
    """A simulated Telegram user. Methods return Update dicts (JSON as Telegram sends it)."""

    def __init__(
        self,
        fake: FakeState,
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
            for m in COMMAND_RE.finditer(text)
        ]
        reply_id = (
            reply_to if reply_to is None or isinstance(reply_to, int) else reply_to.message_id
        )
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
        fake: FakeState,
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
        uid = user_ref(user)
        if self.members.get(uid) not in ("creator", "administrator") or status != "member":
            self.members[uid] = status

    def status_of(self, user: FakeUser | int) -> str:
        return self.members.get(user_ref(user), "left")

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
