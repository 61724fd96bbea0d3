"""Issue #31: a table read at a glance, and a time that is true when read.

Over whole 6-player games with transfers the table stays short (p95 at most 10 lines and 500
characters a reader sees, in every language: `bench/glance.py` measures more games); it
names each card once; red suits are told apart at a glance; every seated player's hand shows
the bout; the deadline is a date_time entity that each reader's client counts down.
"""

from __future__ import annotations

import html
import re
import statistics
from datetime import UTC, datetime

import pytest

from bot import render
from bot.i18n import Translator
from bot.log import entries_for, trim
from engine import Attack, Card, Game, Rules
from engine.ai import EasyPlayer
from storage import LogEntry
from tests.bot.conftest import BotHarness
from tests.fakes.html import parse_html

TR = Translator()
LANGS = ("en", "de", "ru")
SEATED = ("Alexandra", "Bob", "Владимир", "Jean-Baptiste", "Mia", "Konstantin")
NAMES = {str(n): name for n, name in enumerate(SEATED, 1)}
CARD = re.compile(r"(?<![0-9])(?:10|[2-9JQKA])[♠♣♦♥]\ufe0f?")
DEADLINE = datetime(2026, 12, 5, 12, 0, 40, tzinfo=UTC)


def visible(text: str) -> str:
    plain, _ = parse_html(text)  # (and Telegram would take it)
    return html.unescape(plain)


def whole_games(deck: int, seeds: range) -> list[tuple[Game, list[LogEntry]]]:
    """Every state of whole 6-player games with transfers, a shown trump and the swap on,
    with the log the bot keeps."""
    rules = Rules.preset("perevodnoy").model_copy(
        update={"deck_size": deck, "transfer_by_showing_trump": True, "trump_exchange": True}
    )
    states = []
    for seed in seeds:
        game = Game.new(list(NAMES), rules=rules, seed=seed)
        players = {p: EasyPlayer(seed * 10 + i) for i, p in enumerate(NAMES)}
        log: list[LogEntry] = []
        while not game.is_over:
            player = sorted(game.to_act)[0]
            log += entries_for(game.apply(player, players[player].choose(game, player)))
            trim(log)
            states.append((game.copy(), list(log)))
    return states


@pytest.fixture(scope="module")
def states() -> list[tuple[Game, list[LogEntry]]]:
    return whole_games(36, range(1, 4)) + whole_games(52, range(1, 4))


@pytest.mark.parametrize("lang", LANGS)
def test_the_table_stays_short_over_whole_games_of_six(
    states: list[tuple[Game, list[LogEntry]]], lang: str
) -> None:
    """The targets of issue #31: p95 at most 10 lines and 500 characters."""
    texts = [
        visible(
            render.table(TR, lang, game.view(None), names=NAMES, log=log, deadline=DEADLINE).text
        )
        for game, log in states
    ]
    lines = [text.count("\n") + 1 for text in texts]
    chars = [len(text) for text in texts]
    assert statistics.quantiles(lines, n=20, method="inclusive")[18] <= 10
    assert statistics.quantiles(chars, n=20, method="inclusive")[18] <= 500
    assert max(chars) < 1000


def test_the_bout_on_the_table_names_each_card_once(
    states: list[tuple[Game, list[LogEntry]]],
) -> None:
    """A card lying on the table is named there alone: no line of the log names it again
    (the old table said "Carol attacks 6♦ · Alice covers 6♦ with Q♦" under "6♦ ← Q♦")."""
    for game, log in states:
        text = render.table(TR, "en", game.view(None), names=NAMES, log=log).text
        on_table = {str(card) for pair in game.table for card in pair if card is not None}
        for line in text.splitlines():
            if not line.startswith("<i>") or line.startswith("<i>Last bout") or "shows" in line:
                continue  # the table itself; a bout that left it; a shown trump (R14)
            named = {card.replace("\ufe0f", "") for card in CARD.findall(line)}
            assert not named & on_table, text


def test_r14_a_transfer_reads_right_and_its_card_shows_once() -> None:
    game = Game.from_position(
        {"1": "6♠ 9♣", "2": "6♥ 10♣ J♣", "3": "7♦ 8♦ Q♣"},
        trump="K♦",
        attacker="1",
        rules=Rules.preset("perevodnoy"),
    )
    log: list[LogEntry] = []
    log += entries_for(game.apply("1", Attack(Card.parse("6♠"))))
    transfer = next(a for a in game.legal_actions("2") if type(a).__name__ == "Transfer")
    log += entries_for(game.apply("2", transfer))
    text = render.table(TR, "en", game.view(None), names=NAMES, log=log).text
    assert "\nTable: 6♠   6♥️\n" in text
    assert "<i>Bob transfers to Владимир</i>" in text
    assert text.count("6♥") == 1 and "🛡 Владимир (3)" in text


def test_red_suits_are_drawn_in_emoji_presentation_black_ones_as_text() -> None:
    """♥️ ♦️ (U+FE0F) are drawn red by every Telegram client in light and dark themes; ♠ ♣
    stay text in the theme's colour: the two colours tell the suits apart at a glance."""
    assert render.card_text(Card.parse("10♥")) == "10♥\ufe0f"
    assert render.card_text(Card.parse("Q♦")) == "Q♦\ufe0f"
    assert render.card_text(Card.parse("A♠")) == "A♠"
    assert render.card_text(Card.parse("7♣")) == "7♣"
    game = Game.from_position({"1": "6♥ 7♠", "2": "8♦ 9♣"}, trump="A♥", attacker="1")
    keyboard = render.hand(TR, "en", game.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert keyboard.keyboard is not None
    labels = [b.text for row in keyboard.keyboard.inline_keyboard for b in row]
    assert labels == ["7♠", "6♥\ufe0f"]  # (trumps last)
    assert "Trump A♥\ufe0f" in render.table(TR, "en", game.view(None), names=NAMES).text


@pytest.mark.parametrize("lang", LANGS)
def test_the_deadline_is_a_date_time_entity_the_reader_sees_counting_down(lang: str) -> None:
    game = Game.from_position({"1": "6♥ 7♠", "2": "8♦ 9♣"}, trump="A♥", attacker="1")
    unix = int(DEADLINE.timestamp())
    for text in (
        render.table(TR, lang, game.view(None), names=NAMES, deadline=DEADLINE).text,
        render.hand(
            TR, lang, game.view("1"), game_id=1, names=NAMES, chat_title="x", deadline=DEADLINE
        ).text,
    ):
        plain, entities = parse_html(text)
        times = [e for e in entities if e["type"] == "date_time"]
        assert [(e["unix_time"], e["date_time_format"]) for e in times] == [(unix, "r")]
        # For a client too old for the entity: the clock time, true whenever it is read.
        assert "12:00:40 UTC" in plain and " s)" not in plain
    # Bob does not act: his hand shows no time; the table says whom it waits for.
    bob = render.hand(
        TR, lang, game.view("2"), game_id=1, names=NAMES, chat_title="x", deadline=DEADLINE
    ).text
    assert "tg-time" not in bob


async def test_every_seated_players_hand_shows_the_bout(harness: BotHarness) -> None:
    """Carol, who neither attacks nor defends, reads the cards on the table in her own hand
    (not only "Alice attacks Bob."), and it follows each card; no one gets an edit at half
    time (the deadline counts down in the reader's client)."""
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-31031, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    position = Game.from_position(
        {"1": "6♠ 9♥", "2": "9♠ 10♣ J♣", "3": "6♦ K♣"},
        trump="K♦",
        stock="Q♥ J♥",
        attacker="1",
        rules=Rules(throw_in="neighbours"),
    )
    await h.set_position(group, position)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.settle()
    assert "Table: 6♠\n" in h.hand_message(carol).text
    h.fake.clear_calls()
    h.clock.advance(31)  # half of Bob's 60 s: a private warning, no hand edited
    await h.run_due()
    await h.settle()
    assert "time runs out" in h.fake.last_message(bob.id).text
    assert [c for c in h.fake.calls_for("editMessageText") if c.params["chat_id"] > 0] == []
    await h.send(bob.tap(h.hand_message(bob), "9♠"))
    await h.settle()
    assert "Table: 6♠ ← 9♠\n" in h.hand_message(carol).text
