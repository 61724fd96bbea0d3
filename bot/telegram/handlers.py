"""Handlers: turn Telegram updates into calls of the feature rooms (`bot.play`). No game
logic here, and nothing sent but through the rooms' `Outbox`.

Registered by `bot.app.build_application`, in this order: commands, button taps,
membership changes, group migration, then the error handler.
"""

from __future__ import annotations

import contextlib
import html
import logging
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

from telegram import CallbackQuery, Chat, Message, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot import handling, render
from bot.callbacks import (
    AgainData,
    BadCallback,
    HowtoData,
    KickData,
    LeaveData,
    LobbyData,
    MoveData,
    PracticeData,
    SettingsData,
    decode,
)
from bot.db_watch import quiet
from bot.delivery import SendError, Stopping, Tap, telegram_fault
from bot.kit import Person
from bot.ops import logs, metrics
from bot.play import Rooms
from bot.render import Rendered
from storage import Conflict, DatabaseUnavailable, Fenced, StorageError

logger = logging.getLogger(__name__)

ROOMS_KEY = "rooms"

Callback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]


def rooms_of(context: ContextTypes.DEFAULT_TYPE) -> Rooms:
    rooms: Rooms = context.application.bot_data[ROOMS_KEY]
    return rooms


def person_of(user: User) -> Person:
    return Person(user_id=user.id, name=user.full_name or str(user.id), language=user.language_code)


def tap_of(query: CallbackQuery, at: float | None = None) -> Tap:
    """The tap to answer; `at`: when it arrived (its answer is tried until Telegram no
    longer takes one)."""
    message = query.message
    if message is None:
        return Tap(query.id, at=at)
    carried = None
    if isinstance(message, Message):  # (not an inaccessible one: its buttons are known)
        rows = message.reply_markup.inline_keyboard if message.reply_markup else ()
        carried = any(b.callback_data == query.data for row in rows for b in row)
    return Tap(query.id, message.chat.id, message.message_id, at, carried)


def _is_group(chat: Chat | None) -> bool:
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def _language(update: Update, context: ContextTypes.DEFAULT_TYPE) -> str:
    """The language of a reply: in a group the chat's, in private the sender's."""
    user, chat = update.effective_user, update.effective_chat
    kit = rooms_of(context).kit
    lang = user.language_code if user else None
    if _is_group(chat):
        assert chat is not None
        return await kit.chat_language(chat.id, lang)
    return kit.tr.normalize(lang)


async def _reply(update: Update, context: ContextTypes.DEFAULT_TYPE, key: str, **args: str) -> None:
    message = update.effective_message
    if message is None:
        return
    lang = await _language(update, context)
    await _answer(context, message, [rooms_of(context).kit.t(lang, key, **args)])


async def _answer(context: ContextTypes.DEFAULT_TYPE, message: Message, texts: list[str]) -> None:
    """Reply to a command: in a group as a reply to it, in private as a message."""
    quote = message.message_id if _is_group(message.chat) else None
    for text in texts:
        await rooms_of(context).kit.out.send(message.chat.id, Rendered(text), reply_to=quote)


async def new_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None:
        return
    if not _is_group(chat):  # a group to add the bot to, or practice here
        await rooms_of(context).welcome.new_game_in_private(person=person_of(user))
        return
    await rooms_of(context).lobbies.new_game(
        chat_id=chat.id,
        chat_title=chat.title or "",
        person=person_of(user),
        message_id=message.message_id if message else None,
    )


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    if chat.type != ChatType.PRIVATE:
        await help_command(update, context)
        return
    welcome = rooms_of(context).welcome
    payload = context.args[0] if context.args else ""
    if not payload or not await welcome.start_payload(person=person_of(user), payload=payload):
        await welcome.welcome(person=person_of(user))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/help: the buttons and commands, with a "How to play" button."""
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    await rooms_of(context).guide.help(
        chat_id=chat.id,
        lang=await _language(update, context),
        message_id=message.message_id if _is_group(chat) else None,
    )


async def howto_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/howto: how to play, with the rules in force in this chat."""
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None or message is None:
        return
    in_group = _is_group(chat)
    await rooms_of(context).guide.howto_command(
        chat_id=chat.id,
        in_group=in_group,
        person=person_of(user),
        message_id=message.message_id if in_group else None,
    )


async def rules_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    user = update.effective_user
    texts = await rooms_of(context).chat.rules_text(
        chat_id=chat.id,
        fallback_language=_lang(update),
        person=person_of(user) if user is not None else None,
    )
    # In private, the rules of each of the player's games: as many per message as fit.
    await _answer(context, message, render.pack(texts))


def _lang(update: Update) -> str | None:
    return update.effective_user.language_code if update.effective_user else None


async def hand_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None:
        return
    await rooms_of(context).moves.resend_hand(
        person=person_of(user),
        chat_id=chat.id if _is_group(chat) else None,
        message_id=message.message_id if message else None,
    )


def _command(update: Update) -> tuple[int, Person, int | None] | None:
    """(chat id, sender, message id) of a command; None without a chat or a sender."""
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None:
        return None
    return chat.id, person_of(user), message.message_id if message else None


async def _in_group(
    update: Update, context: ContextTypes.DEFAULT_TYPE, refusal: str
) -> tuple[int, Person, int | None] | None:
    """(chat id, sender, message id) of a group command; elsewhere reply `refusal`."""
    found = _command(update)
    if found is not None and not _is_group(update.effective_chat):
        await _reply(update, context, refusal)
        return None
    return found


async def leave_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/leave: give up the game of this chat (a group's, or the private practice game)."""
    if found := _command(update):
        chat_id, person, message_id = found
        await rooms_of(context).moderation.leave(
            chat_id=chat_id, person=person, message_id=message_id
        )


async def cancel_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if found := _command(update):
        chat_id, person, message_id = found
        await rooms_of(context).moderation.cancel(
            chat_id=chat_id, person=person, message_id=message_id
        )


async def settings_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/settings: a group's house rules; in private, the player's own settings."""
    if found := _command(update):
        chat_id, person, message_id = found
        chat = rooms_of(context).chat
        if _is_group(update.effective_chat):
            await chat.settings_command(chat_id=chat_id, person=person, message_id=message_id)
        elif chat_id == person.user_id:
            await chat.personal_settings(person=person)


async def kick_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None or message is None:
        return
    if not _is_group(chat):
        await _reply(update, context, "kick-in-group")
        return
    replied = message.reply_to_message
    target = person_of(replied.from_user) if replied and replied.from_user else None
    await rooms_of(context).moderation.kick(
        chat_id=chat.id, person=person_of(user), target=target, message_id=message.message_id
    )


async def stats_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None:
        return
    replied = message.reply_to_message if message else None
    target = None
    if _is_group(chat) and replied and replied.from_user and not replied.from_user.is_bot:
        target = person_of(replied.from_user)
    await rooms_of(context).chat.stats(
        chat_id=chat.id,
        in_group=_is_group(chat),
        person=person_of(user),
        target=target,
        message_id=message.message_id if message else None,
        chat_title=chat.title or "",
    )


async def practice_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    if chat.type != ChatType.PRIVATE:
        await _reply(update, context, "practice-in-private")
        return
    await rooms_of(context).lobbies.practice_command(person=person_of(user))


async def member_left(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is None or message.left_chat_member is None:
        return
    await rooms_of(context).moderation.member_left(
        chat_id=message.chat.id, user_id=message.left_chat_member.id
    )


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None:
        return
    rooms = rooms_of(context)
    out, t = rooms.kit.out, rooms.kit.t
    person = person_of(user)
    tap = tap_of(query, out.timing.now())
    try:
        data = decode(query.data)
    except BadCallback:
        logger.info("refused callback data from user %s", user.id)
        await rooms.moves.unknown_button(query=tap, person=person)
        return
    try:
        await _dispatch(rooms, tap, person, data)
    except StorageError as exc:
        rooms.store.watch.failed(exc)  # a database that cannot store: one warning per outage
        later = handling.failed(exc)  # webhook mode: kept in the inbox, handled again later
        log = logger.debug if quiet(exc) else logger.warning
        if out.answered(tap):  # what failed came after the tap's own change
            log("storing after a tap of user %s failed: %s", user.id, exc)
            return
        if later:
            log("a tap of user %s waits for the database: %s", user.id, exc)
            await out.answer(tap, t(user.language_code, "error-later"))
            return
        if isinstance(exc, Conflict):  # another writer got there first: nothing was applied
            await out.answer(tap, t(user.language_code, "error-conflict"))
            return
        log("a tap of user %s was not stored: %s", user.id, exc)  # nothing applied
        await out.answer(tap, t(user.language_code, storage_error_key(exc)))


def storage_error_key(error: StorageError) -> str:
    """What a user is told of a save that failed (nothing of it happened)."""
    if isinstance(error, Conflict):
        return "error-conflict"
    if isinstance(error, DatabaseUnavailable):  # the server has a problem: not "just now"
        return "error-unavailable"
    return "error-storage"


async def _dispatch(rooms: Rooms, tap: Tap, person: Person, data: object) -> None:
    if isinstance(data, MoveData):
        await rooms.moves.tap(query=tap, person=person, data=data)
    elif isinstance(data, LobbyData):
        await rooms.lobbies.tap(query=tap, person=person, data=data)
    elif isinstance(data, AgainData):
        await rooms.again.ready(query=tap, person=person, data=data)
    elif isinstance(data, SettingsData):
        await rooms.chat.settings_tap(
            query=tap, person=person, option=data.option, value=data.value
        )
    elif isinstance(data, PracticeData):
        await rooms.lobbies.start_practice(
            query=tap, person=person, opponents=data.opponents, level=data.level
        )
    elif isinstance(data, LeaveData) and data.no:
        await rooms.moderation.leave_declined(query=tap, person=person, user_id=data.user_id)
    elif isinstance(data, LeaveData):
        await rooms.moderation.leave_confirmed(
            query=tap, person=person, game_id=data.game_id, user_id=data.user_id
        )
    elif isinstance(data, KickData) and data.no:
        await rooms.moderation.kick_declined(
            query=tap, person=person, game_id=data.game_id, user_id=data.user_id
        )
    elif isinstance(data, KickData):
        await rooms.moderation.kick_confirmed(
            query=tap, person=person, game_id=data.game_id, user_id=data.user_id
        )
    elif isinstance(data, HowtoData):
        await rooms.guide.howto_tap(query=tap, person=person)


_OUTSIDE = (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED)


async def private_other(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A private message that is no command of ours: say what the bot understands."""
    message = update.effective_message
    command = message is not None and (message.text or "").startswith("/")
    await _reply(update, context, "private-unknown-command" if command else "private-unknown")


async def my_membership(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot's own membership changed: removed from a group ends its game; added to one,
    it says how to start."""
    change = update.my_chat_member
    if change is None or not _is_group(change.chat):
        return
    if change.new_chat_member.status in _OUTSIDE:
        await rooms_of(context).moderation.bot_removed(chat_id=change.chat.id)
    elif change.old_chat_member.status in _OUTSIDE:
        await rooms_of(context).moderation.bot_added(
            chat_id=change.chat.id, person=person_of(change.from_user)
        )


async def migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is None or message.migrate_to_chat_id is None:
        return
    await rooms_of(context).moderation.migrate(
        old_chat_id=message.chat.id, new_chat_id=message.migrate_to_chat_id
    )


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log first; then, if an operator chat is set, report there (no tokens, no hands)."""
    if context.error is not None and handling.failed(context.error):
        with _ids_of(update):  # kept in the inbox, handled again later: no error
            logger.info("an update waits for the database or the lead: %s", context.error)
        return
    if isinstance(context.error, SendError) and telegram_fault(context.error):
        with _ids_of(update):  # Telegram's fault, a WARNING line already (`Outbox`): no bug
            logger.info(
                "an update's reply was lost to Telegram's faults (%s)", type(context.error).__name__
            )
        return
    if isinstance(context.error, Stopping):  # a reply left at a stop's bound (games are
        with _ids_of(update):  # stored and shown again at the next start): no error
            logger.info("a reply not sent: %s", context.error)
        return
    with _ids_of(update):  # outside `_observed` now: the line names the update again
        logger.error("error while handling an update", exc_info=context.error)
    rooms: Rooms | None = context.application.bot_data.get(ROOMS_KEY)
    settings = rooms.kit.settings if rooms is not None else None
    if rooms is None or settings is None or settings.operator_chat_id is None:
        return
    error = context.error
    trace = "".join(traceback.format_exception(error)) if error else ""
    token = settings.bot_token.get_secret_value()
    trace = trace.replace(token, "<token>")[-3000:]
    text = f"<b>Error</b>: {html.escape(type(error).__name__)}\n<pre>{html.escape(trace)}</pre>"
    try:
        await rooms.kit.out.send(settings.operator_chat_id, Rendered(text))
    except Exception:
        logger.exception("could not report the error to the operator chat")


def _observed(kind: str, callback: Callback) -> Callback:
    """Handle the update with its id and chat on every log line (`bot.ops.logs`), and count
    it and its handling time by `kind` (`bot.ops.metrics`): from here, when python-telegram-bot
    hands it over, to the handler's end, after its last Bot API call."""

    async def handle(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if ROOMS_KEY not in context.application.bot_data:  # this worker does not lead now
            logger.info("an update arrived while this worker does not lead: left to the leader")
            handling.failed(Fenced("this worker does not lead"))
            return
        message = update.effective_message
        if message is not None and message.chat.type == ChatType.PRIVATE:
            # (a message in the chat: a copy of a send from now on lies after it)
            rooms_of(context).kit.out.seen(message.chat.id, message.message_id)
        started = time.perf_counter()
        try:
            with _ids_of(update):
                await callback(update, context)
        finally:
            metrics.update_handled(kind, time.perf_counter() - started)

    return handle


def _ids_of(update: object) -> contextlib.AbstractContextManager[None]:
    """Log lines within name the update and its chat."""
    if not isinstance(update, Update):
        return contextlib.nullcontext()
    chat = update.effective_chat
    return logs.ids(update_id=update.update_id, chat_id=chat.id if chat is not None else None)


def _as_oneself(callback: Callback) -> Callback:
    """Refuse a command sent in a group as the group (an anonymous admin) or as a channel:
    Telegram then names a stand-in account as the sender, so the bot cannot tell who it is."""

    async def command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is not None and message.sender_chat is not None and _is_group(message.chat):
            await _reply(update, context, "error-anonymous")
            return
        await callback(update, context)

    return command


def _storing(callback: Callback, *, reply: bool = True) -> Callback:
    """A handler whose save failed (a database locked too long, full, read-only) says so in
    a reply to the command ("could not be saved, nothing happened"), as a tap is answered,
    instead of an update error with a traceback and an operator report each time; the
    operator hears of a database that cannot store once (`DatabaseWatch`). ``reply=False``:
    an update nobody waits for (a member left), only logged."""

    async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        try:
            await callback(update, context)
        except StorageError as exc:
            rooms = rooms_of(context)
            rooms.store.watch.failed(exc)
            later = handling.failed(exc)  # webhook mode: kept in the inbox, handled again later
            log = logger.debug if quiet(exc) else logger.warning
            log("an update was not stored: %s", exc)
            message = update.effective_message
            if not reply or message is None:
                return
            try:
                lang = await _language(update, context)
            except StorageError:  # the database cannot be read either
                lang = rooms.kit.tr.normalize(_lang(update))
            key = "error-later" if later else storage_error_key(exc)
            await _answer(context, message, [rooms.kit.t(lang, key)])

    return handler


def register(application: Application) -> None:  # type: ignore[type-arg]
    """Wire the handlers, in this order: commands, buttons, membership, migration, errors."""
    commands: dict[str, Callback] = {
        "newgame": new_game,
        "start": start,
        "help": help_command,
        "howto": howto_command,
        "rules": rules_command,
        "hand": hand_command,
        "leave": leave_command,
        "cancel": cancel_command,
        "settings": settings_command,
        "kick": kick_command,
        "stats": stats_command,
        "practice": practice_command,
    }
    # New messages only: editing a sent command must not run it again.
    for name, callback in commands.items():
        if name not in ("help", "howto", "rules"):  # these need not know who asks
            callback = _as_oneself(callback)
        callback = _storing(callback)
        application.add_handler(
            CommandHandler(name, _observed("command", callback), filters.UpdateType.MESSAGE)
        )
    # Anything else in private (text, an unknown command): what the bot understands.
    application.add_handler(
        MessageHandler(
            filters.ChatType.PRIVATE & filters.UpdateType.MESSAGE & filters.TEXT,
            _observed("other", private_other),
        )
    )
    application.add_handler(CallbackQueryHandler(_observed("callback", button)))
    application.add_handler(
        ChatMemberHandler(
            _observed("other", _storing(my_membership, reply=False)),
            ChatMemberHandler.MY_CHAT_MEMBER,
        )
    )
    application.add_handler(
        MessageHandler(
            filters.StatusUpdate.MIGRATE, _observed("other", _storing(migrated, reply=False))
        )
    )
    application.add_handler(
        MessageHandler(
            filters.StatusUpdate.LEFT_CHAT_MEMBER,
            _observed("other", _storing(member_left, reply=False)),
        )
    )
    application.add_error_handler(on_error)


__all__ = ["ROOMS_KEY", "register"]
