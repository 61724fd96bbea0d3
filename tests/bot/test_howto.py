"""How to play (#19): the how-to text and the rules it follows, /howto and /help's button,
the lobby's one rules line with its Rules and How to play buttons, and the how-to before a
newcomer's first practice game."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from bot import render
from bot.callbacks import (
    MAX_CALLBACK_BYTES,
    BadCallback,
    HowtoData,
    LobbyData,
    decode,
    encode_howto,
    encode_lobby,
)
from bot.i18n import Translator
from engine import Card, Rules, Suit
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeUser

TR = Translator()
EVERY_OPTION = Rules(
    deck_size=24,
    throw_in="neighbours_at_5",
    transfer=True,
    transfer_by_showing_trump=True,
    trump_exchange=True,
    no_trump_start="random",
    redeal_on_flush=True,
)
"""Every line the how-to can have."""


# ---------------------------------------------------------------- the text


@pytest.mark.parametrize("deck", [24, 32, 36, 52])
def test_r2_howto_says_what_beats_what_with_cards_of_the_chats_deck(deck: int) -> None:
    text = render.howto(TR, "en", Rules(deck_size=deck))
    low = Rules(deck_size=deck).lowest_rank
    assert f"{deck} cards, {low} to ace" in text
    assert "a higher card of the suit beats, any trump beats a non-trump" in text
    example = re.search(r"(\S+) beats (\S+); with (\S) trumps, (\S+) beats (\S+)\.", text)
    assert example is not None
    higher, lower, trump, trump_card, ace = example.groups()
    assert lower == f"{low}♥\ufe0f" and trump_card == f"{low}♠"  # cards of this deck, red in red
    # The examples are true by the engine's rule (R2), and the other way round is not.
    suit = Suit(trump)
    assert Card.parse(higher).beats(Card.parse(lower), suit)
    assert Card.parse(trump_card).beats(Card.parse(ace), suit)
    assert not Card.parse(ace).beats(Card.parse(trump_card), suit)


def test_r14_howto_explains_transfers_only_when_they_are_on() -> None:
    off = render.howto(TR, "en", Rules())
    on = render.howto(TR, "en", Rules.preset("perevodnoy"))
    shown = render.howto(TR, "en", Rules(transfer=True, transfer_by_showing_trump=True))
    assert "Transfer" not in off
    assert "<b>Transfer:</b> before covering, the defender may add the same rank" in on
    assert "Showing the trump" not in on
    assert "Showing the trump of that rank is enough." in shown


def test_howto_follows_throwing_in_the_limit_the_first_attack_and_the_swap() -> None:
    classic = render.howto(TR, "en", Rules())
    assert "the others add cards of ranks on the table" in classic
    assert "up to 6 cards (5 before the first discard)" in classic  # R10
    assert "lowest trump attacks first (none dealt: a new deal)" in classic  # R5
    assert "discarded, the defender attacks next" in classic  # R12
    assert "Taken:</b> the player after the taker does" in classic  # R13
    assert "a player without cards is out" in classic and "the durak" in classic  # R16, R17
    assert "Trump swap" not in classic and "New deal" not in classic
    online = render.howto(TR, "en", Rules.preset("online"))
    assert "(from 5 players, the defender's neighbours)" in online  # R9
    assert "up to 6 cards, never more than the defender had" in online
    assert "(none dealt: one drawn by lot)" in online
    neighbours = render.howto(TR, "en", Rules(throw_in="neighbours"))
    assert "the defender's two neighbours add cards of ranks" in neighbours
    swap = render.howto(TR, "en", Rules(deck_size=32, trump_exchange=True))
    assert "the lowest trump (the 7) may take the face-up trump" in swap
    assert "<b>New deal:</b>" in render.howto(TR, "en", Rules(redeal_on_flush=True))  # R6


def test_the_lobbys_rules_line_names_preset_deck_and_transfers() -> None:
    assert render.rules_summary(TR, "en", Rules()) == (
        "Rules: classic · 36 cards · transfers off — /rules for all"
    )
    assert render.rules_summary(TR, "en", Rules.preset("perevodnoy")) == (
        "Rules: perevodnoy · 36 cards · transfers on — /rules for all"
    )
    assert "24 Karten · Weiterschieben an" in render.rules_summary(
        TR, "de", Rules(deck_size=24, transfer=True)
    )


def test_the_info_buttons_round_trip_and_forgeries_are_refused() -> None:
    assert decode(encode_howto()) == HowtoData()
    big = 10**12 - 1
    for op in ("rules", "howto"):
        data = encode_lobby(big, op)  # type: ignore[arg-type]
        assert len(data.encode()) <= MAX_CALLBACK_BYTES
        assert decode(data) == LobbyData(big, op)  # type: ignore[arg-type]
    for forged in ("H1", "Hx", "h", "l7.ix", "l7.hfoo", "l7.jeasy"):  # only "add" takes a level
        with pytest.raises(BadCallback):
            decode(forged)


# ---------------------------------------------------------------- in a chat


async def set_rules(h: BotHarness, group: FakeGroup, rules: Rules) -> None:
    """The group's house rules, as /settings would store them."""
    async with h.rooms.kit.db.transaction() as tx:
        settings = await tx.chats.get(chat_id=group.id)
        preset = rules.preset_name() or "custom"
        await tx.chats.save(settings=replace(settings, rules=rules, preset=preset))


def posted_after(h: BotHarness, chat_id: int, count: int) -> list[FakeMessage]:
    return h.fake.messages(chat_id)[count:]


async def test_the_lobby_shows_one_rules_line_until_it_becomes_the_table(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9001, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    line = "Rules: classic · 36 cards · transfers off — /rules for all"
    details = ("Who may throw in", "Until the first discard", "Time per move", "Swap the lowest")
    assert line in lobby.text and not any(d in lobby.text for d in details)
    assert ["Rules", "How to play"] in [[b.text for b in row] for row in lobby.buttons]
    await h.send(bob.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    started = h.fake.message(group.id, lobby.message_id)
    # The lobby message is the table now: no lobby button, no rules list either.
    assert started.message_id == (await h.table_of(group)).message_id
    assert all(b.callback_data is None for row in started.buttons for b in row)
    assert not any(d in started.text for d in details)
    # Its old Rules button (a client that still shows it) is told the lobby is closed.
    before = len(h.fake.messages(group.id))
    tap = bob.tap_raw(started, encode_lobby(h.rooms.store.live(group.id).id or 0, "rules"))
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == TR.t("en", "error-lobby-closed")
    assert posted_after(h, group.id, before) == []


async def test_the_lobbys_rules_button_posts_every_rule_at_most_once_a_minute(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-9002, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    before = len(h.fake.messages(group.id))
    tap = bob.tap(lobby, "Rules")  # anyone, seated or not
    await h.send(tap)
    (posted,) = posted_after(h, group.id, before)
    assert posted.reply_to_message_id == lobby.message_id
    assert posted.html == render.rules_text(TR, "en", Rules(), 60)
    assert "Who may throw in: everybody" in posted.text and "Time per move: 60 s" in posted.text
    assert h.fake.message(group.id, lobby.message_id).edits == 0  # the lobby stays as it was
    # Another tap within the minute: pointed to it, nothing posted.
    again = carol.tap(lobby, "Rules")
    await h.send(again)
    answer = h.fake.answer_for(again)
    assert answer is not None and answer.text == TR.t("en", "info-above")
    assert len(posted_after(h, group.id, before)) == 1
    h.clock.advance(61)
    await h.send(carol.tap(lobby, "Rules"))
    assert len(posted_after(h, group.id, before)) == 2


async def test_the_lobbys_how_to_play_explains_the_rules_of_that_lobby(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice", "de")
    group = h.fake.group(-9003, "Runde", admins={alice})
    rules = Rules(deck_size=24, transfer=True)
    await set_rules(h, group, rules)
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    assert render.rules_summary(TR, "de", rules) in lobby.text
    await h.send(alice.tap(lobby, "So wird gespielt"))
    posted = h.fake.last_message(group.id)
    assert posted.html == render.howto(TR, "de", rules)
    assert "24 Karten, 9 bis Ass" in posted.text
    assert "Weiterschieben:" in posted.text


async def test_help_offers_how_to_play_in_the_words_of_the_chats_rules(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9004, "Club", admins={alice})
    command = alice.send(group, "/help")
    await h.send(command)
    help_message = h.fake.last_message(group.id)
    assert help_message.html == TR.t("en", "help-text") and "/howto" in help_message.text
    await h.send(alice.tap(help_message, "How to play"))
    classic = h.fake.last_message(group.id)
    assert classic.reply_to_message_id == help_message.message_id
    assert "36 cards, 6 to ace" in classic.text and "10♥️ beats 6♥️;" in classic.text
    assert "Transfer" not in classic.text
    # The chat changes its rules: the same button (no minute to wait: the text is new) and
    # /howto say so.
    await set_rules(h, group, Rules(deck_size=24, transfer=True))
    await h.send(alice.tap(help_message, "How to play"))
    short = h.fake.last_message(group.id)
    assert short.message_id != classic.message_id
    assert "24 cards, 9 to ace" in short.text and "10♥️ beats 9♥️;" in short.text
    assert "Transfer: before covering" in short.text
    howto = alice.send(group, "/howto")
    await h.send(howto)
    reply = h.fake.last_message(group.id)
    assert reply.html == short.html
    assert reply.reply_to_message_id == howto["message"]["message_id"]
    for scope in ("all_group_chats", "all_private_chats"):
        menu = h.fake.commands({"type": scope}, "en")
        assert {"command": "howto", "description": "How to play Durak"} in menu


async def test_howto_in_private_explains_the_rules_of_the_players_group_game(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-9005, "Club", admins={alice})
    await set_rules(h, group, Rules.preset("perevodnoy"))
    await h.open_game(group, [alice, bob])
    await h.send(alice.send_private("/howto"))
    text = h.fake.last_message(alice.id).text
    assert text.startswith("How to play Durak in Club") and "Transfer: " in text
    await h.send(carol.start_private())
    await h.send(carol.send_private("/howto"))  # no game: the rules of practice
    assert h.fake.last_message(carol.id).html == render.howto(TR, "en", Rules())


# ---------------------------------------------------------------- practice


async def give_up(h: BotHarness, user: FakeUser, group: FakeGroup | None = None) -> None:
    """/leave in the group (None: the practice game) and its confirm: the game ends with a
    result."""
    chat_id = user.id if group is None else group.id
    await h.send(user.send_private("/leave") if group is None else user.send(group, "/leave"))
    confirm = h.fake.last_message(chat_id)
    await h.send(user.tap(confirm, confirm.buttons[0][0].text))  # "Yes, I give up"
    assert h.rooms.store.live(chat_id) is None


async def test_a_first_practice_starts_with_how_to_play_and_the_next_does_not(
    harness: BotHarness,
) -> None:
    h = harness
    solo = h.user(7, "Solo", "ru")
    await h.send(solo.start_private())
    before = len(h.fake.messages(solo.id))
    await h.send(solo.send_private("/practice"))
    howto, menu = posted_after(h, solo.id, before)
    assert howto.html == render.howto(TR, "ru", Rules())  # practice's rules, the player's words
    assert howto.buttons == [] and menu.html == TR.t("ru", "practice-intro")
    await h.send(solo.send_private("/practice"))  # not finished yet: still a newcomer
    assert posted_after(h, solo.id, before)[2].html == howto.html
    await h.send(solo.tap(h.fake.last_message(solo.id), "P1e"))
    await give_up(h, solo)  # a finished practice game
    before = len(h.fake.messages(solo.id))
    await h.send(solo.send_private("/practice"))
    (only,) = posted_after(h, solo.id, before)
    assert only.html == TR.t("ru", "practice-intro")


async def test_a_player_who_finished_a_group_game_gets_no_howto_before_practice(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9006, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await give_up(h, bob, group)
    before = len(h.fake.messages(alice.id))
    await h.send(alice.send_private("/practice"))
    (only,) = posted_after(h, alice.id, before)
    assert only.html == TR.t("en", "practice-intro")
