"""The table names each card the rules made public once: the bout on the table as it lies,
and a line for how the last bout ended with the cards that left the table then; never a
card that only a hand holds."""

from __future__ import annotations

import random
import re

import pytest

from bot import render
from bot.i18n import Translator
from bot.log import trim
from bot.render.table import log_lines
from engine import Attack, Defend, Game, ShowTrump, Transfer
from storage import ChatSettings, LogEntry
from tests.bot.conftest import BotHarness

TR = Translator(default="en")
NAMES = {"1": "Alice", "2": "Bob", "3": "Carol"}
CARD = re.compile(r"(?<![0-9])(10|[2-9JQKA])([♠♣♦♥])")


def test_r12_r13_the_table_names_each_card_once_and_tells_how_the_last_bout_ended() -> None:
    """The cards on the table are the table's; the log adds only how the last bout ended,
    with the cards that left the table then (taken, or beaten off), and what the table does
    not show of the bout on it."""
    log = [
        LogEntry("attack", "1", cards=("6♣",)),
        LogEntry("transfer", "2", target="3", cards=("6♦",)),
        LogEntry("defend", "3", cards=("6♣", "Q♣")),
        LogEntry("add", "1", cards=("Q♦",)),
        LogEntry("take", "3"),
        LogEntry("picked", "3", count=3, cards=("6♣", "Q♣", "Q♦")),
        LogEntry("attack", "1", cards=("7♠",)),
        LogEntry("defend", "2", cards=("7♠", "9♠")),
    ]
    # R14: the transfer is told while its bout lies on the table; its card lies there
    assert log_lines(TR, "en", log[:3], NAMES) == ["Bob transfers to Carol"]
    assert log_lines(TR, "en", log, NAMES) == ["Last bout: Carol took 6♣ Q♣ Q♦️"]
    ended = [*log, LogEntry("beaten", count=2, cards=("7♠", "9♠")), LogEntry("out", "2")]
    assert log_lines(TR, "en", ended, NAMES) == ["Last bout: 7♠ 9♠ beaten off · Bob is out"]
    assert log_lines(TR, "de", ended, NAMES) == ["Letzte Runde: 7♠ 9♠ abgelegt · Bob ist raus"]
    assert log_lines(TR, "ru", log, NAMES) == ["Прошлый раунд: Carol забирает 6♣ Q♣ Q♦️"]


def test_r14_r19_shown_and_exchanged_trumps_are_named() -> None:
    log = [
        LogEntry("exchange", "1", cards=("6♥", "K♥")),
        LogEntry("attack", "1", cards=("7♠",)),
        LogEntry("show", "2", target="3", cards=("7♥",)),
    ]
    assert log_lines(TR, "en", log, NAMES) == [
        "Alice swaps 6♥️ for the face-up trump K♥️ · Bob shows 7♥️ and transfers to Carol",
    ]


def test_entries_stored_before_cards_were_named_still_read() -> None:
    old = [LogEntry("attack", "1"), LogEntry("defend", "2"), LogEntry("beaten", count=2)]
    assert log_lines(TR, "en", old, NAMES) == ["2 cards beaten off"]


def test_the_log_keeps_the_last_three_bouts() -> None:
    log = [LogEntry("exchange", "1", cards=("6♥", "K♥"))]
    for n in range(5):
        log += [LogEntry("attack", "1", cards=(f"{n + 6}♠",)), LogEntry("take", "2")]
    trim(log)
    assert [e.cards for e in log if e.kind == "attack"] == [("8♠",), ("9♠",), ("10♠",)]


def test_a_table_with_a_long_log_stays_within_telegrams_limit() -> None:
    game = Game.new(["1", "2", "3"], seed=3)
    names = dict.fromkeys(game.players, "N" * 64)  # Telegram's longest first name
    bout = [LogEntry("attack", "1", cards=("6♣",))]
    bout += [LogEntry("timeout", "2"), LogEntry("defend", "2", cards=("6♣", "Q♣"))] * 40
    text = render.table(TR, "en", game.view(None), names=names, log=bout * 3).text
    assert len(text) <= 4096
    assert "runs out of time" in text  # the latest notes still show
    assert "Q♣" not in text  # (the cover lies on the table, if anywhere)


def _public_now(game: Game, public: set[str]) -> None:
    """Add what the game made public so far: every card played, covered with, transferred
    with or shown (its history), and the face-up trump."""
    for _, action in game.history:
        if isinstance(action, Attack | Defend | Transfer | ShowTrump):
            public.add(str(action.card))
    if game.trump_card is not None:
        public.add(str(game.trump_card))


def _scan(h: BotHarness, chat_id: int, public: set[str], named: set[str]) -> None:
    """Every card named in the group's messages (texts and buttons) is public."""
    for message in h.fake.messages(chat_id):
        for text in (message.text, *message.button_texts):
            for rank, suit in (m.groups() for m in CARD.finditer(text)):
                named.add(rank + suit)
                assert rank + suit in public, f"{rank + suit} shown in the group: {text}"


@pytest.mark.parametrize("seed", [1, 2])
async def test_no_group_message_ever_shows_a_card_that_is_not_public(
    harness: BotHarness, seed: int
) -> None:
    """Whole games with transfers, shown trumps and the trump exchange: after every tap,
    every card named anywhere in the group (texts and buttons) has been public."""
    h = harness
    chat_id = -7300 - seed
    rules = {"transfer": True, "transfer_by_showing_trump": True, "trump_exchange": True}
    async with h.rooms.kit.db.transaction() as tx:
        settings = ChatSettings(chat_id=chat_id)
        settings.rules = settings.rules.model_copy(update=rules)
        await tx.chats.save(settings=settings)
    users = [h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")]
    group = h.fake.group(chat_id, "Club", admins={users[0]})
    await h.open_game(group, users)
    rng = random.Random(seed)
    public: set[str] = set()
    named: set[str] = set()
    game_id = None
    for _ in range(3000):
        record = h.rooms.store.live(group.id)
        if record is None or record.status != "running" or record.game is None:
            break
        game_id = record.id
        _public_now(record.game, public)
        _scan(h, group.id, public, named)
        actor = sorted(record.game.to_act)[0]
        await h.tap_random(h.users[int(actor)], rng)
    else:
        raise AssertionError("the game did not end")
    assert game_id is not None
    finished = await h.rooms.store.game(game_id)  # the last moves and the result
    assert finished.game is not None
    _public_now(finished.game, public)
    _scan(h, group.id, public, named)
    assert "Game over" in h.fake.last_message(group.id).text
    assert len(named) > 10  # the log did name the cards played
