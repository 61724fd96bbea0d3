"""The fake Bot API behaves like Telegram when driven through python-telegram-bot."""

from __future__ import annotations

import asyncio
import datetime as dtm
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeAllGroupChats,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.error import (
    BadRequest,
    ChatMigrated,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TimedOut,
)
from telegram.ext import (
    Application,
    CallbackContext,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.fakes.html import parse_html
from tests.fakes.telegram import BOT_USERNAME, Button, FakeMessage, FakeTelegram, Limits, Window
from tests.fakes.telegram.methods import METHODS

AnyApp = Application[Any, Any, Any, Any, Any, Any]


def keyboard(*rows: list[tuple[str, str]]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(text, callback_data=data) for text, data in row] for row in rows]
    )


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = Bot("123:TEST", request=fake.request(), get_updates_request=fake.updates_request())
    async with bot:  # initialize() -> getMe
        yield bot


# --------------------------------------------------------------------------- basics


async def test_get_me_identity(fake: FakeTelegram, bot: Bot) -> None:
    assert bot.username == BOT_USERNAME == "durak_test_bot"
    assert bot.id == 123 == fake.bot_id
    assert fake.count("getMe") == 1
    call = fake.calls[0]
    assert call.method == "getMe"
    assert call.ok is True


async def test_ptb_sends_form_encoded_params_with_json_nested_values(
    fake: FakeTelegram, bot: Bot
) -> None:
    alice = fake.user(1, "Alice")
    alice.start_private()
    await bot.send_message(1, "hi", reply_markup=keyboard([("A", "a")]), disable_notification=True)
    params = fake.calls_for("sendMessage")[0].params
    assert params["chat_id"] == 1
    assert params["text"] == "hi"
    assert params["disable_notification"] is True
    assert params["reply_markup"] == {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}


async def test_no_network_outside_the_fake(fake: FakeTelegram) -> None:
    async with httpx.AsyncClient(transport=fake.transport) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get("https://example.com/")


async def test_wrong_token_is_unauthorized(fake: FakeTelegram) -> None:
    requests = (fake.request(), fake.updates_request())
    other = Bot("999:WRONG", request=requests[0], get_updates_request=requests[1])
    with pytest.raises(InvalidToken):
        await other.initialize()
    assert fake.calls[-1].error_code == 401
    for request in requests:
        await request.shutdown()


async def test_unknown_method_is_404(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("fooBar", api_kwargs={"chat_id": 1})
    call = fake.calls_for("fooBar")[0]
    assert call.error_code == 404
    assert call.description == "Not Found: method not found"


# --------------------------------------------------------------------------- private chats


async def test_private_chat_requires_start_and_respects_blocking(
    fake: FakeTelegram, bot: Bot
) -> None:
    alice = fake.user(1, "Alice", language_code="ru", username="alice")
    with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
        await bot.send_message(alice.id, "hello")
    update = alice.start_private("join_-100")
    assert update["message"]["text"] == "/start join_-100"
    assert update["message"]["chat"] == {
        "id": 1,
        "type": "private",
        "first_name": "Alice",
        "username": "alice",
    }
    assert update["message"]["from"]["language_code"] == "ru"
    sent = await bot.send_message(alice.id, "hello")
    assert sent.chat_id == 1
    assert sent.message_id == 2  # /start was message 1 of this chat

    alice.block_bot()
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(alice.id, "hello again")
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.edit_message_text("edited", chat_id=alice.id, message_id=sent.message_id)
    alice.unblock_bot()
    await bot.send_message(alice.id, "welcome back")
    assert [m.text for m in fake.messages(alice.id)] == ["hello", "welcome back"]
    assert fake.messages(alice.id, from_bot=None)[0].text == "/start join_-100"


async def test_unknown_chat_is_not_found(bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(424242, "hi")


# --------------------------------------------------------------------------- messages & edits


async def test_send_edit_and_not_modified(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    markup = keyboard([("Join", "join"), ("Leave", "leave")], [("Start", "start")])
    sent = await bot.send_message(group.id, "<b>Lobby</b>", parse_mode="HTML", reply_markup=markup)
    assert sent.text == "Lobby"
    assert sent.text_html == "<b>Lobby</b>"

    stored = fake.last_message(group.id)
    assert stored.message_id == sent.message_id == 1
    assert stored.text == "Lobby"
    assert stored.html == "<b>Lobby</b>"
    assert stored.buttons == [
        [Button("Join", "join", None), Button("Leave", "leave", None)],
        [Button("Start", "start", None)],
    ]
    assert stored.button("start").text == "Start"
    assert stored.button("Leave").callback_data == "leave"

    edited = await bot.edit_message_text(
        "<b>Lobby</b>: Alice",
        chat_id=group.id,
        message_id=sent.message_id,
        parse_mode="HTML",
        reply_markup=markup,
    )
    assert isinstance(edited, type(sent))
    assert edited.text == "Lobby: Alice"
    assert stored.text == "Lobby: Alice"  # live object
    assert stored.edits == 1

    with pytest.raises(BadRequest, match=r"(?i)message is not modified") as exc_info:
        await bot.edit_message_text(
            "<b>Lobby</b>: Alice",
            chat_id=group.id,
            message_id=sent.message_id,
            parse_mode="HTML",
            reply_markup=markup,
        )
    assert exc_info.value.message == (
        "Message is not modified: specified new message content and reply markup are exactly "
        "the same as a current content and reply markup of the message"
    )

    # Same text without reply_markup: Telegram removes the keyboard, so it *is* a change.
    await bot.edit_message_text(
        "<b>Lobby</b>: Alice", chat_id=group.id, message_id=sent.message_id, parse_mode="HTML"
    )
    assert stored.buttons == []
    await bot.edit_message_text(
        "<b>Lobby</b>: Alice",
        chat_id=group.id,
        message_id=sent.message_id,
        parse_mode="HTML",
        reply_markup=markup,
    )
    assert stored.button_texts == ["Join", "Leave", "Start"]

    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=group.id, message_id=999)


async def test_message_ids_increase_per_chat(fake: FakeTelegram, bot: Bot) -> None:
    g1 = fake.group(-1001, "One")
    g2 = fake.group(-1002, "Two")
    ids = [
        (await bot.send_message(g1.id, "a")).message_id,
        (await bot.send_message(g1.id, "b")).message_id,
        (await bot.send_message(g2.id, "c")).message_id,
    ]
    assert ids == [1, 2, 1]
    assert [m.text for m in fake.messages(g1.id)] == ["a", "b"]


async def test_a_message_deleted_by_someone_can_not_be_edited(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    sent = await bot.send_message(group.id, "bye")
    fake.delete_by_user(group.id, sent.message_id)
    assert fake.messages(group.id) == []
    assert fake.messages(group.id, include_deleted=True)[0].deleted
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=group.id, message_id=sent.message_id)


async def test_a_watcher_sees_each_change_of_a_message_as_it_is_made(
    fake: FakeTelegram, bot: Bot
) -> None:
    clock = Seconds()
    fake.enforce(Limits(private=Window(3, 60.0)), clock)
    alice = fake.user(1, "Alice")
    alice.start_private()
    group = fake.group(-1001, "Club")
    seen: list[tuple[int, int, str, str, list[str]]] = []

    def watcher(message: FakeMessage, change: str) -> None:
        seen.append(
            (message.chat_id, message.message_id, change, message.text, message.button_texts)
        )

    stop = fake.watch(watcher)
    hand = await bot.send_message(alice.id, "your hand", reply_markup=keyboard([("7♠", "c7")]))
    turn = keyboard([("8♠", "c8")])
    await bot.edit_message_text("your turn", alice.id, hand.message_id, reply_markup=turn)
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):  # nothing changed
        await bot.edit_message_text("your turn", alice.id, hand.message_id, reply_markup=turn)
    with pytest.raises(RetryAfter):  # refused: nothing new to see
        await bot.edit_message_text("too soon", alice.id, hand.message_id)
    alice.send(group, "hello")  # someone's message is stored too
    clock.now += 60
    await bot.delete_message(alice.id, hand.message_id)
    stop()
    await bot.send_message(group.id, "not watched any more")
    assert seen == [
        (alice.id, hand.message_id, "new", "your hand", ["7♠"]),
        (alice.id, hand.message_id, "edited", "your turn", ["8♠"]),  # as it is after the edit
        (group.id, 1, "new", "hello", []),
        (alice.id, hand.message_id, "deleted", "your turn", ["8♠"]),
    ]


async def test_user_messages_can_not_be_edited(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.user(1, "Alice")
    group = fake.group(-1001, "Club")
    update = alice.send(group, "hello")
    with pytest.raises(BadRequest, match=r"(?i)message can't be edited"):
        await bot.edit_message_text(
            "x", chat_id=group.id, message_id=update["message"]["message_id"]
        )


async def test_text_limits(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    await bot.send_message(group.id, "x" * 4096)
    await bot.send_message(group.id, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match=r"(?i)message is too long"):
        await bot.send_message(group.id, "x" * 4097)
    with pytest.raises(BadRequest, match=r"(?i)message is too long"):
        await bot.send_message(group.id, "&lt;" * 4097, parse_mode="HTML")
    for empty in ("", "   \n"):
        with pytest.raises(BadRequest, match=r"(?i)message text is empty"):
            await bot.send_message(group.id, empty)
    with pytest.raises(BadRequest, match=r"(?i)message text is empty"):
        await bot.send_message(group.id, "<b> </b>", parse_mode="HTML")
    assert fake.count("sendMessage") == 7
    assert [c.ok for c in fake.calls_for("sendMessage")] == [True, True] + [False] * 5


async def test_callback_data_limit_is_64_utf8_bytes(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    await bot.send_message(group.id, "ok", reply_markup=keyboard([("A", "я" * 32)]))  # 64 bytes
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(group.id, "no", reply_markup=keyboard([("A", "я" * 33)]))
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(group.id, "no", reply_markup=keyboard([("A", "x" * 65)]))
    sent = fake.last_message(group.id)
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.edit_message_text(
            "no",
            chat_id=group.id,
            message_id=sent.message_id,
            reply_markup=keyboard([("A", "x" * 65)]),
        )


async def test_reply_to_missing_message(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    with pytest.raises(BadRequest, match=r"(?i)message to be replied not found"):
        await bot.send_message(group.id, "hi", reply_to_message_id=77)
    first = await bot.send_message(group.id, "first")
    reply = await bot.send_message(group.id, "second", reply_to_message_id=first.message_id)
    assert reply.reply_to_message is not None
    assert reply.reply_to_message.text == "first"


# --------------------------------------------------------------------------- HTML


@pytest.mark.parametrize(
    "source",
    [
        "<foo>x</foo>",  # unknown tag
        "<br>",  # Telegram has no <br>
        "<b>x",  # unclosed
        "<b>x</i>",  # mismatched
        "x</b>",  # unexpected end tag
        "a < b",  # bare <
        "A & B",  # bare & (strict: Telegram itself keeps it literally)
        "&nbsp;",  # unsupported named entity
        '<b class="x">y</b>',  # attribute on a tag that allows none (strict)
        "<span>x</span>",  # span needs class="tg-spoiler"
        '<a href="https://x.org">x',
        "<b",
        "<tg-time>in 40 s</tg-time>",  # a date_time entity needs its moment
        '<tg-time unix="soon" format="r">x</tg-time>',
        '<tg-time unix="1767225600" format="rt">x</tg-time>',  # "r" stands alone
        '<tg-time unix="1767225600" format="x">x</tg-time>',
        '<tg-time unix="1767225600" format="tD">x</tg-time>',  # weekday, date, time: in order
    ],
)
async def test_malformed_html_is_rejected(fake: FakeTelegram, bot: Bot, source: str) -> None:
    group = fake.group(-1001, "Club")
    with pytest.raises(BadRequest, match=r"(?i)can't parse entities"):
        await bot.send_message(group.id, source, parse_mode="HTML")
    call = fake.calls_for("sendMessage")[-1]
    assert call.description is not None
    assert call.description.startswith("Bad Request: can't parse entities: ")


@pytest.mark.parametrize(
    ("source", "plain"),
    [
        ("<b>bold</b> <strong>s</strong> <i>i</i> <em>e</em>", "bold s i e"),
        ("<u>u</u> <ins>i</ins> <s>s</s> <strike>k</strike> <del>d</del>", "u i s k d"),
        ("&lt;&gt;&amp;&quot; &#169; &#x1F600;", '<>&" © 😀'),
        ('<a href="https://example.org/?a=1&amp;b=2">link</a>', "link"),
        ('<span class="tg-spoiler">s</span> <tg-spoiler>t</tg-spoiler>', "s t"),
        ("<blockquote expandable>q</blockquote>", "q"),
        ('<pre><code class="language-python">x = 1</code></pre>', "x = 1"),
        ('<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>', "👍"),
        ('<tg-time unix="1767225600" format="r">in 40 s</tg-time>', "in 40 s"),
        (
            '<tg-time unix="1767225600" format="wDT">x</tg-time> <tg-time unix="1">y</tg-time>',
            "x y",
        ),
        ("<B>upper</B> a > b", "upper a > b"),
    ],
)
async def test_valid_html_is_accepted(
    fake: FakeTelegram, bot: Bot, source: str, plain: str
) -> None:
    group = fake.group(-1001, "Club")
    sent = await bot.send_message(group.id, source, parse_mode="HTML")
    assert sent.text == plain
    assert fake.last_message(group.id).text == plain


def test_html_entities_use_utf16_offsets() -> None:
    text, entities = parse_html("😀 <b>x</b> <a href='https://a.b'>y</a>")
    assert text == "😀 x y"
    assert entities == [
        {"type": "bold", "offset": 3, "length": 1},
        {"type": "text_link", "offset": 5, "length": 1, "url": "https://a.b"},
    ]


def test_a_date_time_entity_keeps_its_moment_and_format() -> None:
    text, entities = parse_html('⏳ <tg-time format="r" unix="1767225600">at 00:00 UTC</tg-time>')
    assert text == "⏳ at 00:00 UTC"
    assert entities == [
        {
            "type": "date_time",
            "offset": 2,
            "length": 12,
            "unix_time": 1767225600,
            "date_time_format": "r",
        }
    ]


async def test_lenient_html_mode_matches_telegram() -> None:
    fake = FakeTelegram(strict_html=False)
    fake.group(-1001, "Club")
    async with fake.bot() as bot:
        sent = await bot.send_message(-1001, 'A & B <b class="x">c</b>', parse_mode="HTML")
        assert sent.text == "A & B c"
        with pytest.raises(BadRequest, match=r"(?i)Unsupported start tag"):
            await bot.send_message(-1001, "a < b", parse_mode="HTML")


# --------------------------------------------------------------------------- groups


async def test_bot_kicked_or_left_group(fake: FakeTelegram, bot: Bot) -> None:
    owner = fake.user(1, "Owner")
    supergroup = fake.group(-1001, "Super", owner=owner)
    basic = fake.group(-55, "Basic", owner=owner)
    assert basic.type == "group"
    assert supergroup.type == "supergroup"
    update = supergroup.remove_bot(owner)
    assert update["my_chat_member"]["new_chat_member"]["status"] == "kicked"
    with pytest.raises(Forbidden, match="bot was kicked from the supergroup chat"):
        await bot.send_message(supergroup.id, "hi")
    basic.remove_bot(owner)
    with pytest.raises(Forbidden, match="bot was kicked from the group chat"):
        await bot.send_message(basic.id, "hi")
    supergroup.add_bot(owner)
    await bot.send_message(supergroup.id, "back")
    supergroup.remove_bot(owner, kicked=False)  # the bot leaves
    with pytest.raises(Forbidden, match="bot is not a member of the supergroup chat"):
        await bot.send_message(supergroup.id, "hi")


async def test_group_migration(fake: FakeTelegram, bot: Bot) -> None:
    owner = fake.user(1, "Owner")
    basic = fake.group(-55, "Basic", owner=owner)
    update = basic.migrate_to_supergroup()
    assert update["message"]["migrate_to_chat_id"] == -10055
    assert basic.migrated_to is not None
    with pytest.raises(ChatMigrated) as exc_info:
        await bot.send_message(basic.id, "hi")
    assert exc_info.value.new_chat_id == -10055
    sent = await bot.send_message(-10055, "hi")
    assert sent.chat.type == "supergroup"
    assert basic.migrated_to.migrated_from_update()["message"]["migrate_from_chat_id"] == -55


async def test_chat_members(fake: FakeTelegram, bot: Bot) -> None:
    owner = fake.user(1, "Owner")
    admin = fake.user(2, "Admin")
    member = fake.user(3, "Member")
    outsider = fake.user(4, "Outsider")
    group = fake.group(-1001, "Club", admins={admin}, members=[member], owner=owner)

    assert (await bot.get_chat_member(group.id, owner.id)).status == "creator"
    assert (await bot.get_chat_member(group.id, admin.id)).status == "administrator"
    assert (await bot.get_chat_member(group.id, member.id)).status == "member"
    assert (await bot.get_chat_member(group.id, outsider.id)).status == "left"
    assert (await bot.get_chat_member(group.id, bot.id)).status == "member"

    member.leave(group)
    assert (await bot.get_chat_member(group.id, member.id)).status == "left"


async def test_commands_roundtrip(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_my_commands([BotCommand("newgame", "New game")])
    await bot.set_my_commands(
        [BotCommand("newgame", "Neues Spiel")],
        scope=BotCommandScopeAllGroupChats(),
        language_code="de",
    )
    assert [c["description"] for c in fake.commands()] == ["New game"]
    german = fake.commands({"type": "all_group_chats"}, "de")
    assert [c["description"] for c in german] == ["Neues Spiel"]
    assert fake.commands({"type": "all_group_chats"}, "de")[0]["command"] == "newgame"
    with pytest.raises(BadRequest, match=r"(?i)BOT_COMMAND_INVALID"):
        await bot.set_my_commands([BotCommand("NewGame", "x")])


async def test_chat_member_and_commands_from_a_form_and_from_json_bodies(
    fake: FakeTelegram,
) -> None:
    owner = fake.user(1, "Owner")
    group = fake.group(-1001, "Club", owner=owner)
    # PTB's own path: URL-encoded forms, commands and scope as JSON text
    async with Bot(fake.token, request=fake.request(plain=True)) as plain:
        assert (await plain.get_chat_member(group.id, owner.id)).status == "creator"
        await plain.set_my_commands(
            [BotCommand("newgame", "New game")], scope=BotCommandScopeAllGroupChats()
        )
    assert fake.commands({"type": "all_group_chats"}) == [
        {"command": "newgame", "description": "New game"}
    ]

    # JSON bodies: numbers as numbers or as text; commands and scope as JSON text or objects
    url = f"https://api.telegram.org/bot{fake.token}"
    private = {"type": "all_private_chats"}
    async with httpx.AsyncClient(transport=fake.transport) as client:
        for member in (
            {"chat_id": group.id, "user_id": owner.id},
            {"chat_id": str(group.id), "user_id": str(owner.id)},
        ):
            answer = (await client.post(f"{url}/getChatMember", json=member)).json()
            assert answer["result"]["status"] == "creator"
        for language, commands, scope in (
            ("en", '[{"command": "stats", "description": "Stats"}]', json.dumps(private)),
            ("ru", [{"command": "stats", "description": "Статистика"}], private),
        ):
            body = {"commands": commands, "scope": scope, "language_code": language}
            answer = (await client.post(f"{url}/setMyCommands", json=body)).json()
            assert answer == {"ok": True, "result": True}
    assert fake.commands(private, "en") == [{"command": "stats", "description": "Stats"}]
    assert fake.commands(private, "ru") == [{"command": "stats", "description": "Статистика"}]
    assert [c.ok for c in fake.calls if c.method != "getMe"] == [True] * 6


def test_each_method_the_fake_answers_has_its_handler() -> None:
    handlers = {name for name in dir(FakeTelegram) if name.startswith("_api_")}
    assert handlers == {f"_api_{name}" for name in METHODS}


# --------------------------------------------------------------------------- injection


async def test_fail_next_flood_control(
    fake: FakeTelegram, bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # RetryAfter.retry_after as timedelta
    group = fake.group(-1001, "Club")
    fake.fail_next("sendMessage", 429, retry_after=7, chat_id=group.id)
    with pytest.raises(RetryAfter) as exc_info:
        await bot.send_message(group.id, "hi")
    assert exc_info.value.retry_after == dtm.timedelta(seconds=7)
    assert fake.messages(group.id) == []  # failed calls have no effect
    call = fake.calls_for("sendMessage")[0]
    assert (call.error_code, call.injected) == (429, True)
    assert call.description == "Too Many Requests: retry after 7"
    await bot.send_message(group.id, "hi")  # only the next call failed


async def test_fail_next_matches_chat_and_status(fake: FakeTelegram, bot: Bot) -> None:
    one = fake.group(-1001, "One")
    two = fake.group(-1002, "Two")
    fake.fail_next(
        "sendMessage", 403, "Forbidden: bot was kicked from the supergroup chat", chat_id=two.id
    )
    fake.fail_next("editMessageText", 400, "Bad Request: something odd")
    await bot.send_message(one.id, "fine")
    with pytest.raises(Forbidden, match="kicked"):
        await bot.send_message(two.id, "nope")
    with pytest.raises(BadRequest, match=r"(?i)something odd"):
        await bot.edit_message_text("x", chat_id=one.id, message_id=1)


async def test_timeouts(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    fake.timeout_next("sendMessage")
    with pytest.raises(TimedOut):
        await bot.send_message(group.id, "lost")
    assert fake.messages(group.id) == []
    fake.timeout_next("sendMessage", applied=True)
    with pytest.raises(TimedOut):
        await bot.send_message(group.id, "sent, answer lost")
    assert [m.text for m in fake.messages(group.id)] == ["sent, answer lost"]
    assert all(c.timed_out for c in fake.calls_for("sendMessage"))


# --------------------------------------------------------------------------- application


async def test_application_command_and_callback(fake: FakeTelegram) -> None:
    alice = fake.user(1, "Alice", language_code="de")
    bob = fake.user(2, "Bob")
    group = fake.group(-1001, "Club", admins={alice}, members=[bob])
    errors: list[BaseException] = []

    async def newgame(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        assert update.effective_user is not None
        lang = update.effective_user.language_code
        await update.effective_chat.send_message(
            f"Lobby ({lang}): {context.args}",
            reply_markup=keyboard([("Join", "join")]),
        )

    async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None
        await query.answer(f"{query.from_user.first_name} joined", show_alert=True)
        await query.edit_message_text("Lobby: Bob", reply_markup=keyboard([("Join", "join")]))

    async def on_error(update: object, context: CallbackContext[Any, Any, Any, Any]) -> None:
        assert context.error is not None
        errors.append(context.error)

    app = fake.make_application()
    app.add_handler(CommandHandler("newgame", newgame))
    app.add_handler(CallbackQueryHandler(on_button, pattern="^join$"))
    app.add_error_handler(on_error)

    async with app:
        await fake.deliver(app, alice.send(group, f"/newgame@{BOT_USERNAME} quick"))
        await fake.deliver(app, alice.send(group, "/newgame@other_bot"))  # not for us
        await fake.deliver(app, alice.send(group, "/newgame"))
        lobbies = fake.messages(group.id)
        assert [m.text for m in lobbies] == ["Lobby (de): ['quick']", "Lobby (de): []"]

        tap = bob.tap(lobbies[0], "Join")
        assert tap["callback_query"]["data"] == "join"
        assert fake.answer_for(tap) is None
        await fake.deliver(app, tap)
        answer = fake.answer_for(tap)
        assert answer is not None
        assert (answer.text, answer.show_alert) == ("Bob joined", True)
        assert lobbies[0].text == "Lobby: Bob"
        assert fake.unanswered_callbacks() == []

        # The same tap again: the bot's identical edit is refused like Telegram does.
        await fake.deliver(app, bob.tap(lobbies[0], "join"))
    assert len(errors) == 1
    assert isinstance(errors[0], BadRequest)
    assert "not modified" in str(errors[0])
    with pytest.raises(LookupError):
        bob.tap(lobbies[0], "Leave")


async def test_callback_query_can_be_answered_once(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.user(1, "Alice")
    group = fake.group(-1001, "Club", members=[alice])
    await bot.send_message(group.id, "x", reply_markup=keyboard([("Go", "go")]))
    tap = alice.tap(fake.last_message(group.id), "go")
    query_id = tap["callback_query"]["id"]
    assert await bot.answer_callback_query(query_id, "ok")
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await bot.answer_callback_query(query_id, "again")
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await bot.answer_callback_query("123", "never existed")
    forged = alice.tap_raw(fake.last_message(group.id), "stale:v1")
    assert forged["callback_query"]["data"] == "stale:v1"


async def test_group_event_updates_reach_handlers(fake: FakeTelegram) -> None:
    owner = fake.user(1, "Owner")
    member = fake.user(2, "Member")
    group = fake.group(-55, "Basic", owner=owner, members=[member])
    seen: list[str] = []

    async def my_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.my_chat_member is not None
        seen.append(f"bot:{update.my_chat_member.new_chat_member.status}")

    async def migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(f"migrate:{update.effective_message.migrate_to_chat_id}")

    async def left(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        assert update.effective_message.left_chat_member is not None
        seen.append(f"left:{update.effective_message.left_chat_member.id}")

    app = fake.make_application()
    app.add_handler(ChatMemberHandler(my_member, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, migrated))
    app.add_handler(MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, left))
    async with app:
        await fake.deliver(
            app,
            member.leave(group),
            group.migrate_to_supergroup(-1000055),
            group.remove_bot(owner),
            owner.block_bot(),
        )
    assert seen == ["left:2", "migrate:-1000055", "bot:kicked", "bot:kicked"]


async def test_updates_have_increasing_ids(fake: FakeTelegram) -> None:
    alice = fake.user(1, "Alice")
    group = fake.group(-1001, "Club")
    ids = [alice.send(group, "a")["update_id"], alice.start_private()["update_id"]]
    ids.append(alice.block_bot()["update_id"])
    assert ids == sorted(ids)
    assert len(set(ids)) == 3


async def test_polling_with_long_poll(fake: FakeTelegram) -> None:
    alice = fake.user(1, "Alice")
    received = asyncio.Event()
    texts: list[str] = []

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        assert update.effective_message.text is not None
        texts.append(update.effective_message.text)
        await update.effective_message.reply_text("pong")
        received.set()

    app: AnyApp = fake.make_application()
    app.add_handler(MessageHandler(filters.TEXT, echo))
    fake.queue(alice.start_private())
    async with app:
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0)
        await app.start()
        await asyncio.wait_for(received.wait(), 5)  # guard only; returns at once
        received.clear()
        # Nothing queued now: the bot is parked in a long poll until we queue.
        fake.queue(alice.send_private("ping"))
        await asyncio.wait_for(received.wait(), 5)
        await app.updater.stop()
        await app.stop()
    assert texts == ["/start", "ping"]
    assert [m.text for m in fake.messages(alice.id)] == ["pong", "pong"]
    polls = fake.calls_for("getUpdates")
    assert any(c.params.get("timeout") == 10 for c in polls)  # PTB's default long poll
    assert polls[-1].params.get("timeout") == 0  # PTB confirms the offset on stop
    assert fake.pending_updates == []  # confirmed by the final offset
    assert fake.count("deleteWebhook") == 1  # polling bootstrap


# --------------------------------------------------------------------------- flood limits


class Seconds:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_private_chat_takes_a_burst_then_about_one_a_second(
    fake: FakeTelegram, bot: Bot
) -> None:
    clock = Seconds()
    fake.enforce(Limits(), clock)
    alice = fake.user(1, "Alice")
    alice.start_private()
    for _ in range(3):  # a short burst
        await bot.send_message(alice.id, "hand")
    with pytest.raises(RetryAfter) as refused:
        await bot.send_message(alice.id, "one too many")
    assert refused.value.retry_after.total_seconds() == 3  # type: ignore[union-attr]
    assert [c.error_code for c in fake.flooded] == [429]
    clock.now += 1.0  # the window slides: one more after the first one left it ...
    with pytest.raises(RetryAfter):
        await bot.send_message(alice.id, "still too soon")
    clock.now += 2.0
    await bot.send_message(alice.id, "now")  # ... three seconds after the burst began
    assert fake.flood is not None
    assert fake.flood.over == {"private": 2}  # which limit each refusal met


async def test_a_group_takes_twenty_a_minute_and_edits_count(fake: FakeTelegram, bot: Bot) -> None:
    clock = Seconds()
    fake.enforce(Limits(), clock)
    group = fake.group(-1001, "Club")
    message = await bot.send_message(group.id, "table 0")
    for n in range(1, 20):
        clock.now += 0.5
        await bot.edit_message_text(f"table {n}", chat_id=group.id, message_id=message.message_id)
    with pytest.raises(RetryAfter) as refused:
        await bot.edit_message_text("table 20", chat_id=group.id, message_id=message.message_id)
    assert refused.value.retry_after.total_seconds() == 51  # type: ignore[union-attr]
    other = fake.group(-1002, "Other")
    await bot.send_message(other.id, "another group is not held back")


async def test_the_bot_takes_thirty_a_second_over_all_chats(fake: FakeTelegram, bot: Bot) -> None:
    clock = Seconds()
    fake.enforce(Limits(private=Window(100, 1.0)), clock)
    users = [fake.user(i, f"U{i}") for i in range(1, 32)]
    for user in users:
        user.start_private()
    for user in users[:30]:
        await bot.send_message(user.id, "hi")
    with pytest.raises(RetryAfter):
        await bot.send_message(users[30].id, "the 31st in a second")
    clock.now += 1.0
    await bot.send_message(users[30].id, "the next second")
    assert fake.flood is not None
    assert fake.flood.over == {"bot": 1}  # not the private chat's own limit


async def test_a_message_records_whether_it_notified(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.user(1, "Alice")
    alice.start_private()
    loud = await bot.send_message(alice.id, "your turn")
    quiet = await bot.send_message(alice.id, "fyi", disable_notification=True)
    await bot.edit_message_text("your turn!", chat_id=alice.id, message_id=loud.message_id)
    assert [m.message_id for m in fake.notifications(alice.id)] == [loud.message_id]
    assert quiet.message_id not in [m.message_id for m in fake.notifications(alice.id)]
    assert await bot.delete_message(alice.id, loud.message_id)
    assert fake.notifications(alice.id)[0].deleted  # kept: it did notify
