"""Rendering is pure: every text is checked here without Telegram.

No hand ever reaches public text; every text fits Telegram (4096 characters, valid
HTML as Telegram parses it); every button's callback data fits in 64 bytes.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bot import render
from bot.callbacks import MAX_CALLBACK_BYTES
from bot.i18n import Translator
from bot.render import stats as stats_view
from engine import Attack, Card, Defend, Game, RandomPlayer, Resign, Rules, Take
from storage import LeaderboardRow, LogEntry, PlayerRecord
from tests.fakes.html import parse_html

TR = Translator()
LANGS = ("en", "de", "ru")
DEADLINE = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
NAMES = {"1": "Alice <admin>", "2": "Bob & Co", "3": "Борис", "4": "Dora", "5": "Eve", "6": "Finn"}


def check_fits_telegram(rendered: render.Rendered) -> None:
    text, _entities = parse_html(rendered.text)  # raises on HTML Telegram would refuse
    assert 0 < len(text) <= 4096
    if rendered.keyboard:
        for row in rendered.keyboard.inline_keyboard:
            assert 1 <= len(row) <= 8
            for button in row:
                if button.callback_data is not None:
                    assert len(str(button.callback_data).encode()) <= MAX_CALLBACK_BYTES


def random_positions(players: int, preset: str, seed: int) -> list[Game]:
    game = Game.new([str(i + 1) for i in range(players)], rules=Rules.preset(preset), seed=seed)
    chooser = RandomPlayer(seed)
    rng = random.Random(seed)
    out = [game.copy()]
    while not game.is_over:
        player = rng.choice(sorted(game.to_act))
        game.apply(player, chooser.choose(game, player))
        out.append(game.copy())
    return out


def public_cards(game: Game) -> set[Card]:
    cards = {c for pair in game.table for c in pair if c is not None}
    if game.trump_card is not None:
        cards.add(game.trump_card)
    return cards


@pytest.mark.parametrize(("players", "preset"), [(2, "classic"), (4, "perevodnoy"), (6, "online")])
def test_public_table_never_shows_a_card_in_a_hand(players: int, preset: str) -> None:
    for game in random_positions(players, preset, seed=players):
        text = render.table(
            TR, "en", game.view(None), names=NAMES, log=[LogEntry("attack", "1")]
        ).text
        hidden = {c for p in game.players for c in game.hand(p)} - public_cards(game)
        for card in hidden:
            assert str(card) not in text, f"{card} in a hand leaked into the table message"


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_fits_telegram_in_every_language(lang: str) -> None:
    for game in random_positions(4, "perevodnoy", seed=7)[::3]:
        check_fits_telegram(render.table(TR, lang, game.view(None), names=NAMES, deadline=DEADLINE))
        for p in game.players:
            view = game.view(p)
            check_fits_telegram(
                render.hand(TR, lang, view, game_id=2**40, names=NAMES, chat_title="<Club>")
            )
        if game.outcome:
            check_fits_telegram(render.result(TR, lang, game.outcome, game_id=9, names=NAMES))


def test_hand_message_shows_only_the_players_own_cards() -> None:
    game = Game.from_position({"1": "6♠ 7♠", "2": "8♥ 9♥", "3": "10♦ J♦"}, trump="A♣", attacker="1")
    text = render.hand(TR, "en", game.view("1"), game_id=1, names=NAMES, chat_title="x")
    keyboard = text.keyboard
    assert keyboard is not None
    labels = " ".join(b.text for row in keyboard.inline_keyboard for b in row)
    assert "6♠" in labels and "7♠" in labels
    for other in ("8♥", "9♥", "10♦", "J♦"):
        assert other not in labels and other not in text.text


def test_unplayable_cards_are_marked_and_playable_are_plain() -> None:
    game = Game.from_position({"1": "6♠ 7♥", "2": "8♠ 9♥"}, trump="A♣", attacker="1")
    game.apply("1", Attack(Card.parse("6♠")))
    view = game.view("2")
    keyboard = render.hand(TR, "en", view, game_id=1, names=NAMES, chat_title="x").keyboard
    assert keyboard is not None
    labels = [b.text for row in keyboard.inline_keyboard for b in row]
    assert "8♠" in labels  # beats 6♠
    assert "·9♥️·" in labels  # does not (a red suit in emoji presentation: drawn red)
    assert "Take" in labels


def test_hand_buttons_are_sorted_with_trumps_last() -> None:
    game = Game.from_position({"1": "A♣ 6♥ 9♠ 7♥", "2": "8♠"}, trump="K♣", attacker="1")
    keyboard = render.hand(TR, "en", game.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert keyboard.keyboard is not None
    rows = [[b.text for b in row] for row in keyboard.keyboard.inline_keyboard]
    assert rows == [["6♥️", "7♥️", "9♠"], ["A♣"]]  # trumps last, set apart on their own row


def test_russian_counts_use_three_plural_forms() -> None:
    game = Game.from_position(
        {"1": "6♠", "2": "7♠ 8♠", "3": "9♠ 10♠ J♠ Q♠ K♠"}, trump="A♣", attacker="1"
    )
    text = render.howto(TR, "ru", Rules.preset("classic"))  # (the table shows counts bare)
    assert "36 карт" in text
    counts = [TR.t("ru", "cards-count", count=n) for n in (1, 2, 5)]
    assert counts == ["1 карта", "2 карты", "5 карт"]
    text = render.table(TR, "ru", game.view(None), names=NAMES).text
    assert "Alice &lt;admin&gt; (1)" in text and "Борис (5)" in text


def test_r6_a_redeal_on_a_flush_is_named_in_the_rules_only_when_on() -> None:
    rules = Rules.preset("classic")
    assert "new deal" not in render.rules_text(TR, "en", rules, 60)
    with_redeal = rules.model_copy(update={"redeal_on_flush": True})
    text = render.rules_text(TR, "en", with_redeal, 60)
    assert "five or more cards of one suit and no trump may ask for a new deal: on" in text


def test_rules_text_names_the_options_in_force() -> None:
    text = render.rules_text(TR, "en", Rules.preset("perevodnoy"), 60)
    assert "Transfers (Perevodnoy): on" in text
    assert "60 s" in text
    check_fits_telegram(render.Rendered(text))


@pytest.mark.parametrize(
    ("throw_in", "may_add"),
    [("all", {"Eve", "Finn"}), ("neighbours", {"Eve"})],
)
def test_table_marks_who_may_throw_in(throw_in: str, may_add: set[str]) -> None:
    """R9 on the table: besides attacker and defender, the seats that may still add a card."""
    game = Game.from_position(
        {"4": "6♠ 7♠", "2": "8♥ 9♥", "5": "6♦ J♦", "6": "6♥ Q♦"},
        trump="A♣",
        attacker="4",
        rules=Rules(throw_in=throw_in),  # type: ignore[arg-type]
    )
    before = render.table(TR, "en", game.view(None), names=NAMES).text
    assert "may throw in" not in before  # nothing on the table yet: only the attacker opens
    game.apply("4", Attack(Card.parse("6♠")))
    lines = render.table(TR, "en", game.view(None), names=NAMES).text.splitlines()
    seats = [seat for line in lines for seat in line.split(" · ")]  # two seats a line
    marked = {
        name
        for name in NAMES.values()
        for seat in seats
        if seat.split(" ", 1)[-1].startswith(name) and "may throw in" in seat
    }
    assert marked == may_add


def _hand_of(game: Game, player: str, lang: str) -> tuple[str, list[str]]:
    rendered = render.hand(TR, lang, game.view(player), game_id=1, names=NAMES, chat_title="x")
    assert rendered.keyboard is not None
    return rendered.text, [b.text for row in rendered.keyboard.inline_keyboard for b in row]


def test_a_big_hand_is_laid_out_one_suit_a_row() -> None:
    small = Game.from_position({"1": "6♠ 7♠ 8♦ 9♦ 10♣ 7♥", "2": "6♦"}, trump="A♥", attacker="1")
    rendered = render.hand(TR, "en", small.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert rendered.keyboard is not None
    rows = rendered.keyboard.inline_keyboard
    assert [len(row) for row in rows] == [5, 1]  # six cards: one row, the trump set apart
    big = Game.from_position(
        {"1": "6♠ 7♠ 8♠ 6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦ K♦ 7♥ 8♥", "2": "6♣"}, trump="A♥", attacker="1"
    )
    rendered = render.hand(TR, "en", big.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert rendered.keyboard is not None
    rows = [[b.text.strip("·") for b in row] for row in rendered.keyboard.inline_keyboard]
    assert rows[:4] == [
        ["6♦️", "7♦️", "8♦️", "9♦️", "10♦️", "J♦️"],  # a long suit wraps at six
        ["Q♦️", "K♦️"],
        ["6♠", "7♠", "8♠"],
        ["7♥️", "8♥️"],  # trumps last, on their own
    ]
    check_fits_telegram(rendered)


def test_r9_an_attacker_is_told_of_done_only_when_done_is_offered() -> None:
    game = Game.from_position(
        {"1": "6♠ 6♥ 9♣", "2": "7♠ 8♦ 10♦ J♦", "3": "10♣ J♣ Q♣ K♣"}, trump="A♥", attacker="1"
    )
    game.apply("1", Attack(Card.parse("6♠")))
    text, labels = _hand_of(game, "1", "en")  # the defender is still to move
    assert "6♥️" in labels and "Done" not in labels
    assert "Done" not in text and "throw in" in text
    game.apply("2", Defend(Card.parse("6♠"), Card.parse("7♠")))
    text, labels = _hand_of(game, "1", "ru")  # all beaten: "Бито" ends the bout
    assert "Бито" in labels and "«Бито»" in text


def test_r13_after_a_take_done_is_pass_in_russian() -> None:
    game = Game.from_position(
        {"1": "6♠ 6♥ 9♣", "2": "7♦ 8♦ 10♦ J♦", "3": "10♣ J♣ Q♣ K♣"}, trump="A♥", attacker="1"
    )
    game.apply("1", Attack(Card.parse("6♠")))
    game.apply("2", Take())
    text, labels = _hand_of(game, "1", "ru")
    assert "Пас" in labels and "Бито" not in labels
    assert "берёт" in text and "«Пас»" in text
    table = render.table(TR, "ru", game.view(None), names=NAMES).text
    assert "бито" not in table


def test_an_attacker_with_nothing_to_add_is_addressed_as_you() -> None:
    game = Game.from_position({"1": "6♠ 9♣", "2": "7♠ 8♦ 10♦ J♦"}, trump="A♥", attacker="1")
    game.apply("1", Attack(Card.parse("6♠")))  # "1" holds no other six: nothing to add
    text, _ = _hand_of(game, "1", "en")
    assert "You attack Bob &amp; Co." in text and "Alice &lt;admin&gt; attacks" not in text
    text, _ = _hand_of(game, "2", "en")  # the defender is told who attacks
    assert "Alice &lt;admin&gt;" in text


def test_r17_at_the_end_hands_tell_the_result_and_keep_the_last_cards_in_view() -> None:
    game = Game.from_position({"1": "6♠", "2": "7♠ 8♦"}, trump="♥", attacker="1")
    game.apply("1", Attack(Card.parse("6♠")))
    game.apply("2", Defend(Card.parse("6♠"), Card.parse("7♠")))
    assert game.is_over and game.durak == "2"
    rendered = render.hand(TR, "en", game.view("2"), game_id=1, names=NAMES, chat_title="x")
    assert rendered.keyboard is None
    assert "Game over" in rendered.text and "You are the durak." in rendered.text
    assert "Your last cards: 8♦️" in rendered.text and "Your place" not in rendered.text
    check_fits_telegram(rendered)
    rendered = render.hand(TR, "en", game.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert "The durak is Bob &amp; Co." in rendered.text and "Your place: 1 of 2." in rendered.text
    assert "last cards" not in rendered.text
    for lang, durak in (("de", "Du bist der Durak."), ("ru", "Ты остаёшься в дураках.")):
        hand = render.hand(TR, lang, game.view("2"), game_id=1, names=NAMES, chat_title="x")
        assert durak in hand.text
    table = render.table(TR, "en", game.view(None), names=NAMES).text
    assert "🃏 Bob &amp; Co (1) durak" in table and "takes" not in table
    assert "✅ Alice &lt;admin&gt; out" in table


def test_r18_after_a_resign_the_final_table_shows_nobody_else_out_who_still_holds_cards() -> None:
    game = Game.from_position({"1": "6♠ 7♦", "2": "7♠ 8♦"}, trump="♥", attacker="1")
    game.apply("1", Resign())
    table = render.table(TR, "en", game.view(None), names=NAMES).text
    assert "🃏 Alice &lt;admin&gt; (2) durak" in table
    assert "✅ Bob &amp; Co (2)\n" in table and "Co (2) out" not in table


def test_r14_every_transfer_has_its_button_and_the_defender_is_told_of_them() -> None:
    game = Game.from_position(
        {"1": "8♠ 9♣", "2": "8♥ 8♦ 6♣", "3": "10♣ J♣ Q♣ K♣"},
        trump="A♥",
        attacker="1",
        rules=Rules.preset("perevodnoy"),
    )
    game.apply("1", Attack(Card.parse("8♠")))
    text, labels = _hand_of(game, "2", "en")
    assert "Transfer 8♥️" in labels and "Transfer 8♦️" in labels
    assert "transfer with a button below" in text


@pytest.mark.parametrize(
    ("lang", "rating", "rate"),
    [("en", "-1.6", "25%"), ("de", "-1,6", "25\u00a0%"), ("ru", "-1,6", "25\u00a0%")],
)
def test_leaderboard_numbers_are_written_as_each_language_writes_them(
    lang: str, rating: str, rate: str
) -> None:
    row = LeaderboardRow(
        player_id="1",
        user_id=1,
        name="Anna",
        is_computer=False,
        games=8,
        durak_count=2,
        durak_rate=0.25,
        rating=-1.6,
        streak=1,
    )
    text = stats_view.leaderboard(
        TR, lang, title="Club", rows=[row], me=None, show_computers=True
    ).text
    assert rating in text and f"({rate})" in text


def test_leaderboard_names_computers_in_the_chats_language_of_today() -> None:
    """A computer's stored name is the one of the day its last game ended; the leaderboard
    names it from its id instead, so a chat that switched to German reads German names."""
    computer = LeaderboardRow(
        player_id="cpu-hard-1",
        user_id=None,
        name="Computer 1 (hard)",  # stored while the chat was English
        is_computer=True,
        games=5,
        durak_count=1,
        durak_rate=0.2,
        rating=1.0,
        streak=2,
    )
    odd = replace(computer, player_id="cpu-unknown-x", name="Robo")  # not a known id: kept
    text = stats_view.leaderboard(
        TR, "de", title="Club", rows=[computer, odd], me=None, show_computers=True
    ).text
    assert "Computer 1 (schwer) 🤖" in text and "(hard)" not in text
    assert "Robo 🤖" in text


def _player(n: int, games: int, durak: int = 0, rating: float | None = 1.0) -> LeaderboardRow:
    return LeaderboardRow(
        player_id=str(n),
        user_id=n,
        name=f"P{n}",
        is_computer=False,
        games=games,
        durak_count=durak,
        durak_rate=durak / games,
        rating=rating,
        streak=1,
    )


def test_leaderboard_marks_a_gap_only_where_ranks_are_left_out() -> None:
    top = [_player(n, 5, rating=10.0 - n) for n in range(1, 4)]
    far = stats_view.leaderboard(
        TR, "en", title="Club", rows=top, me=(7, _player(9, 4)), show_computers=False
    ).text.splitlines()
    assert far[5:7] == ["…", "7. P9: 1.0 · 4 games, never the durak"]
    next_one = stats_view.leaderboard(
        TR, "en", title="Club", rows=top, me=(4, _player(9, 4)), show_computers=False
    ).text.splitlines()
    assert "…" not in next_one and next_one[5].startswith("4. P9: ")


def test_leaderboard_ranks_from_the_first_game_and_marks_provisional_ratings() -> None:
    """A player with one game has a place and a rating, marked provisional (and a note
    says what that means); no library or model is named."""
    rows = [_player(1, 5, rating=4.0), _player(2, 1, durak=1, rating=-1.5)]
    lines = stats_view.leaderboard(
        TR, "en", title="Club", rows=rows, me=None, show_computers=False
    ).text.splitlines()
    assert lines[2] == "1. P1: 4.0 · 5 games, never the durak"
    assert lines[3] == "2. P2: -1.5 (provisional) · 1 game, durak once (100%)"
    assert "<i>“Provisional”: fewer than 3 games so far" in lines[-1]
    for lang in ("en", "de", "ru"):
        text = stats_view.leaderboard(
            TR, lang, title="Club", rows=rows, me=None, show_computers=False
        ).text
        assert "openskill" not in text.lower()


def test_an_empty_leaderboard_says_no_game_has_ended() -> None:
    lines = stats_view.leaderboard(
        TR, "en", title="Club", rows=[], me=None, show_computers=False
    ).text.splitlines()
    assert lines[2:] == ["No finished games in this group yet."]


@pytest.mark.parametrize(
    ("lang", "args", "expected"),
    [
        ("ru", (1, 1), "1 игра, в дураках 1 раз (100\u00a0%)"),
        ("ru", (21, 2), "21 игра, в дураках 2 раза (10\u00a0%)"),
        ("ru", (25, 5), "25 игр, в дураках 5 раз (20\u00a0%)"),
        ("ru", (22, 21), "22 игры, в дураках 21 раз (95\u00a0%)"),
        ("ru", (3, 0), "3 игры, ни разу в дураках"),
        ("de", (1, 1), "1 Spiel, einmal Durak (100\u00a0%)"),
        ("de", (4, 2), "4 Spiele, zweimal Durak (50\u00a0%)"),
        ("de", (5, 3), "5 Spiele, 3-mal Durak (60\u00a0%)"),
        ("de", (2, 0), "2 Spiele, nie Durak"),
        ("en", (4, 3), "4 games, durak 3 times (75%)"),
    ],
)
def test_a_tally_counts_games_and_times_durak_in_each_language(
    lang: str, args: tuple[int, int], expected: str
) -> None:
    games, durak = args
    text = stats_view.leaderboard(
        TR,
        lang,
        title="Club",
        rows=[_player(1, games, durak)],
        me=None,
        show_computers=False,
    ).text
    assert any(line.endswith(f" · {expected}") for line in text.splitlines())


@pytest.mark.parametrize(
    ("lang", "streak", "expected"),
    [
        ("ru", 1, "В последней игре — не в дураках"),
        ("ru", 21, "Не в дураках 21 игру подряд"),
        ("ru", 3, "Не в дураках 3 игры подряд"),
        ("ru", -11, "В дураках 11 игр подряд"),
        ("ru", -1, "В последней игре — в дураках"),
        ("de", -1, "Im letzten Spiel Durak"),
        ("de", 4, "4 Spiele in Folge nicht Durak"),
        ("en", -2, "The durak 2 games in a row"),
    ],
)
def test_a_run_is_worded_with_its_plural_forms(lang: str, streak: int, expected: str) -> None:
    record = PlayerRecord(
        player_id="1",
        chat_id=-1,
        user_id=1,
        name="P1",
        is_computer=False,
        games=40,
        durak_count=12,
        won=28,
        draws=0,
        resigned=0,
        timed_out=0,
        durak_rate=0.3,
        rating=20.0,
        streak=streak,
        last_played_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    standing = stats_view.Standing(title="Club", record=record, rank=2, ranked=9)
    card = stats_view.player_card(TR, lang, name="P1", overall=standing, chats=[standing])
    assert expected in card.text.splitlines()


@pytest.mark.parametrize("lang", ["en", "de", "ru"])
def test_help_explains_the_buttons_and_lists_every_command(lang: str) -> None:
    text = TR.t(lang, "help-text")
    for command in ("/newgame", "/rules", "/hand", "/leave", "/cancel", "/stats", "/settings"):
        assert command in text
    assert "/kick" in text and "/practice" in text
    assert TR.t(lang, "button-take") in text and TR.t(lang, "button-pass") in text
    parse_html(text)  # valid Telegram HTML


def test_r3_a_lobby_with_more_seats_than_new_rules_allow_says_so() -> None:
    seats = [render.LobbySeat(f"P{i}", False) for i in range(6)]
    text = render.lobby(
        TR, "en", game_id=1, opener="P0", seats=seats, rules=Rules(deck_size=24)
    ).text
    assert "Players (6/4)" in text
    assert (
        "Too many players for this deck: 2 players must leave, or an admin picks a bigger" in text
    )


def test_an_empty_table_in_a_hand_reads_as_one_sentence() -> None:
    game = Game.from_position({"1": "6♠ 9♣", "2": "7♠ 8♦"}, trump="A♥", attacker="1")
    text, _ = _hand_of(game, "1", "en")
    assert "The table is empty." in text and "Table: The table is empty." not in text


def test_r11_a_defender_who_takes_is_told_who_may_still_throw_in() -> None:
    """With one other player, the hand names them; with more, "the others" (R11)."""
    two = Game.from_position({"1": "6♠ 6♥ 7♠", "2": "9♣ 10♣"}, trump="K♦", attacker="1")
    two.apply("1", Attack(Card.parse("6♠")))
    two.apply("2", Take())
    text = render.hand(TR, "en", two.view("2"), game_id=1, names=NAMES, chat_title="x").text
    assert "You take. Alice &lt;admin&gt; may still throw in." in text  # 6♥ may follow
    three = Game.from_position(
        {"1": "6♠ 7♠", "2": "9♣ 10♣", "3": "6♦ 8♦"}, trump="K♦", attacker="1"
    )
    three.apply("1", Attack(Card.parse("6♠")))
    three.apply("2", Take())
    text = render.hand(TR, "en", three.view("2"), game_id=1, names=NAMES, chat_title="x").text
    assert "You take. The others may still throw in." in text


def test_r17_a_player_without_cards_is_not_shown_as_attacking() -> None:
    """Alice played her last card: with the stock empty she is out (R17), not "⚔️ Alice: 0
    cards"; with cards left in the stock she draws after the bout."""
    empty = Game.from_position({"1": "6♠", "2": "9♣ 10♣", "3": "7♦ 8♦"}, trump="♦", attacker="1")
    empty.apply("1", Attack(Card.parse("6♠")))
    text = render.table(TR, "en", empty.view(None), names=NAMES).text
    assert "✅ Alice &lt;admin&gt; out" in text
    stocked = Game.from_position(
        {"1": "6♠", "2": "9♣ 10♣", "3": "7♦ 8♦"}, trump="K♦", stock="Q♥ J♥", attacker="1"
    )
    stocked.apply("1", Attack(Card.parse("6♠")))
    text = render.table(TR, "en", stocked.view(None), names=NAMES).text
    assert "Alice &lt;admin&gt; (0) draws after the bout" in text


def test_r2_trumps_are_set_apart_on_a_row_of_their_own() -> None:
    """Trumps beat every other suit (R2): the hand's last row holds them, and only them."""
    game = Game.from_position(
        {"1": "6♠ 9♠ 7♦ K♦ 8♥ A♣", "2": "9♣ 10♣"}, trump="K♥", stock="Q♥ J♥", attacker="1"
    )  # six cards would fill one row
    keyboard = render.hand(TR, "en", game.view("1"), game_id=1, names=NAMES, chat_title="x")
    assert keyboard.keyboard is not None
    rows = [[b.text for b in row] for row in keyboard.keyboard.inline_keyboard]
    assert rows[-1] == ["8♥️"]
    assert "8♥️" not in [text for row in rows[:-1] for text in row]
