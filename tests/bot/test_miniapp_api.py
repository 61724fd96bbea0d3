"""The Mini App's HTTP API (#32, docs/miniapp.md) against a whole bot: who is let in, what a
move from the app is answered (the same as a tap on the chat's hand), a stream that drops
and comes back, onlookers that cost Telegram nothing, the page's files, a worker that does
not lead."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from bot.app import build_application
from bot.i18n import Translator
from bot.miniapp import routes
from bot.miniapp.live import Live, TooMany
from bot.miniapp.routes import MiniApp
from bot.ops.health import Health
from bot.web import WebServer
from engine import Game, Rules
from storage import GameRecord
from tests.bot.conftest import TOKEN, BotHarness, make_settings
from tests.bot.miniapp_client import WAIT, Mini, Viewer, init_data, ref_of, serving
from tests.fakes.telegram import FakeGroup, FakeUser

TR = Translator()


@pytest.fixture
async def mini(tmp_path: Path) -> AsyncIterator[Mini]:
    async with serving(tmp_path) as m:
        yield m


async def two_players(
    h: BotHarness, hands: dict[str, str]
) -> tuple[FakeUser, FakeUser, FakeGroup, GameRecord]:
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3000, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = Game.from_position(hands, trump="A♣", stock="6♣ 7♣", attacker="1", rules=Rules())
    await h.set_position(group, game)
    record = h.rooms.store.live(group.id)
    assert record is not None
    return alice, bob, group, record


# ---------------------------------------------------------------- who is let in


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"token": "654321:ANOTHER-BOT-token"}, "forged"),  # not signed with our token
        ({"age": 24 * 3600 + 5}, "expired"),
        ({"age": -300}, "expired"),  # from the future
    ],
)
async def test_initdata_that_is_not_telegrams_or_too_old_is_refused_in_the_users_language(
    mini: Mini, options: dict[str, object], reason: str
) -> None:
    response = await mini.session(5, "Eve", "de", **options)  # type: ignore[arg-type]
    assert response.status_code == 401
    assert response.json() == {"error": reason, "message": TR.t("de", f"app-refused-{reason}")}
    assert "token" not in response.json()


async def test_altered_or_missing_initdata_is_refused(mini: Mini) -> None:
    signed = init_data(mini.h.clock().timestamp(), 5, "Eve", "ru")
    altered = signed.replace("Eve", "Bob")
    answers = []
    for body in ({"init_data": altered}, {"init_data": ""}, {}):
        response = await mini.client.post(mini.base + "api/session", json=body)
        answers.append((response.status_code, response.json()))
    assert answers == [
        (401, {"error": "forged", "message": TR.t("ru", "app-refused-forged")}),
        (401, {"error": "missing", "message": TR.t("en", "app-refused-missing")}),
        (401, {"error": "missing", "message": TR.t("en", "app-refused-missing")}),
    ]
    garbage = await mini.client.post(mini.base + "api/session", content=b"{not json")
    assert garbage.status_code == 400


async def test_a_page_opened_outside_telegram_is_told_so_in_the_browsers_language(
    mini: Mini,
) -> None:
    response = await mini.client.post(
        mini.base + "api/session",
        json={"init_data": ""},
        headers={"Accept-Language": "fr-FR,de;q=0.8,en;q=0.5"},  # (no French: German next)
    )
    assert response.status_code == 401
    assert response.json() == {"error": "missing", "message": TR.t("de", "app-refused-missing")}


async def test_a_session_gives_the_pages_words_and_no_game_to_someone_without_one(
    mini: Mini,
) -> None:
    response = await mini.session(5, "Eve", "ru")
    assert response.status_code == 200
    body = response.json()
    assert body["lang"] == "ru" and body["game"] is None
    assert body["strings"]["app-no-game"] == TR.t("ru", "app-no-game")
    assert {"app-reconnecting", "app-refused-forged", "app-your-turn", "app-onlooker"} <= set(
        body["strings"]
    )
    assert all(key.startswith("app-") for key in body["strings"])
    assert TOKEN.partition(":")[2] not in response.text


async def test_a_bad_or_expired_token_gets_no_stream(mini: Mini) -> None:
    h = mini.h
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3100, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    assert record is not None and record.id is not None
    token = await mini.token(1, "Alice")
    url = mini.base + "api/events"
    forged = await mini.client.get(url, params={"token": token[:-2] + "xx", "game": "g1"})
    assert forged.status_code == 401 and forged.json()["error"] == "forged"
    h.clock.advance(3601)  # the session token's hour is up: the page asks for a new one
    expired = await mini.client.get(url, params={"token": token, "game": ref_of(record.id)})
    assert expired.status_code == 401 and expired.json()["error"] == "expired"
    fresh = await mini.token(1, "Alice")
    nothing = await mini.client.get(url, params={"token": fresh})
    assert nothing.status_code == 400
    guessed = await mini.client.get(url, params={"token": fresh, "game": f"g{record.id}"})
    assert guessed.status_code == 400  # a game is watched by its link, not by its number
    stranger = (await mini.session(5, "Eve", start=f"g{record.id}")).json()
    assert stranger["game"] is None
    invited = (await mini.session(5, "Eve", start=ref_of(record.id))).json()
    assert invited["game"] == ref_of(record.id)


# ---------------------------------------------------------------- moves, as taps


async def test_a_move_out_of_turn_is_answered_as_the_same_tap_in_the_chat(mini: Mini) -> None:
    h = mini.h
    _alice, bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None
    tap = bob.tap(h.hand_message(bob), "·8♠·")
    await h.send(tap)
    in_chat = h.fake.answer_for(tap)
    assert in_chat is not None and in_chat.text
    token = await mini.token(2, "Bob")
    game = record.game
    assert game is not None
    response = await mini.move(token, ref_of(record.id), game.move_number, "attack 8♠")
    assert response.json() == {"ok": False, "text": in_chat.text}
    assert game.move_number == 0 and not game.table


async def test_a_doubled_app_move_counts_once_and_is_answered_quietly(mini: Mini) -> None:
    h = mini.h
    _alice, _bob, group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None and record.game is not None
    token = await mini.token(1, "Alice")
    ref = ref_of(record.id)
    first, second = await asyncio.gather(
        mini.move(token, ref, 0, "attack 6♠"), mini.move(token, ref, 0, "attack 6♠")
    )
    assert [first.json(), second.json()] == [{"ok": True, "text": None}] * 2
    assert record.game.move_number == 1 and [str(a) for a, _ in record.game.table] == ["6♠"]
    await mini.settle()
    assert "6♠" in h.read(await h.table_of(group))  # the chat's table follows the app's move
    assert h.rooms.screens.sees_current(record, "1") and h.rooms.screens.sees_current(record, "2")


async def test_a_stale_app_move_is_answered_too_late_as_an_old_hand_button(mini: Mini) -> None:
    h = mini.h
    alice, bob, group, record = await two_players(h, {"1": "6♠ 9♥ 9♠", "2": "8♠ 7♥"})
    assert record.id is not None and record.game is not None
    ref = ref_of(record.id)
    old_button = h.hand_message(alice).button("9♥").callback_data
    assert old_button is not None
    alice_app = await mini.viewer(1, "Alice", ref)
    at_start = alice_app.last["move"]
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "8♠"))  # covered: the table is not as it was
    stale_tap = alice.tap_raw(h.hand_message(alice), old_button)
    await h.send(stale_tap)
    in_chat = h.fake.answer_for(stale_tap)
    assert in_chat is not None and in_chat.text is not None and "Too late" in in_chat.text
    token = await mini.token(1, "Alice")
    response = await mini.move(token, ref, at_start, "attack 9♥")
    assert response.json() == {"ok": False, "text": in_chat.text}
    assert record.game.move_number == 2
    del group


async def test_a_move_the_app_showed_that_still_holds_counts_as_an_older_keyboard_does(
    mini: Mini,
) -> None:
    h = mini.h
    # Three players: Carol's throw-in options do not change when Alice says Done.
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-3200, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    game = Game.from_position(
        {"1": "6♠ 6♦ K♦", "2": "8♠ 7♥ J♥ Q♥", "3": "6♥ 10♦ 7♦"}, trump="A♣", attacker="1"
    )
    await h.set_position(group, game)
    record = h.rooms.store.live(group.id)
    assert record is not None and record.id is not None
    ref = ref_of(record.id)
    token = await mini.token(1, "Alice")
    assert (await mini.move(token, ref, 0, "attack 6♠")).json()["ok"]
    assert (await mini.move(await mini.token(2, "Bob"), ref, 1, "defend 6♠ 8♠")).json()["ok"]
    carol_app = await mini.viewer(3, "Carol", ref)
    shown = carol_app.last
    assert {a["action"] for a in shown["legal"]} == {"attack 6♥", "pass"}
    done = await mini.move(token, ref, shown["move"], "pass")  # Alice: Done
    assert done.json() == {"ok": True, "text": None}
    assert game.move_number > shown["move"]
    carol_token = await mini.token(3, "Carol")
    response = await mini.move(carol_token, ref, shown["move"], "attack 6♥")
    assert response.json() == {"ok": True, "text": None}
    assert [str(a) for a, _ in game.table] == ["6♠", "6♥"]


async def test_a_move_from_someone_not_playing_or_malformed_is_refused_in_words(
    mini: Mini,
) -> None:
    h = mini.h
    _alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None
    ref = ref_of(record.id)
    dave = await mini.token(4, "Dave")
    response = await mini.move(dave, ref, 0, "attack 6♠")
    assert response.json() == {"ok": False, "text": TR.t("en", "error-not-in-game")}
    token = await mini.token(1, "Alice")
    for body in (
        {"game": ref, "move": "0", "action": "attack 6♠"},
        {"game": ref, "move": 0},
        {"game": ref, "move": 0, "action": "resign"},  # /leave's, with its confirmation
    ):
        bad = await mini.client.post(
            mini.base + "api/move", json=body, headers={"Authorization": f"Bearer {token}"}
        )
        assert bad.status_code == 400 and bad.json() == {
            "ok": False,
            "text": TR.t("en", "app-bad-request"),
        }
    unsigned = await mini.client.post(
        mini.base + "api/move", json={"game": ref, "move": 0, "action": "attack 6♠"}
    )
    assert unsigned.status_code == 401 and unsigned.json()["error"] == "missing"
    assert record.game is not None and record.game.move_number == 0


# ---------------------------------------------------------------- streams


async def test_a_dropped_stream_comes_back_with_the_game_as_it_is_now(mini: Mini) -> None:
    h = mini.h
    alice, bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None and record.game is not None
    bob_app = await mini.viewer(2, "Bob", ref_of(record.id))
    assert bob_app.last["move"] == 0 and bob_app.last["table"] == []
    await bob_app.drop()
    await h.send(alice.tap(h.hand_message(alice), "6♠"))  # while Bob's app is offline
    await bob_app.connect()
    state = bob_app.last
    assert state["move"] == 1 and state["table"] == [{"attack": "6♠", "defence": None}]
    assert {a["action"] for a in state["legal"]} == {"defend 6♠ 8♠", "take"}
    assert mini.h.rooms.live.watching(record.id) == 1  # the reconnect replaced the old stream
    del bob


async def test_the_table_open_on_two_devices_stays_open_on_both(mini: Mini) -> None:
    """Bob's phone and desktop: neither pushes the other off (each reconnecting in turn,
    "Reconnecting…" for ever); a move reaches both."""
    h = mini.h
    alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None
    phone = await mini.viewer(2, "Bob", ref_of(record.id))
    desktop = await mini.viewer(2, "Bob", ref_of(record.id))
    assert mini.h.rooms.live.watching(record.id) == 2
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    for page in (phone, desktop):
        state = await page.until(lambda s: s["move"] == 1)
        assert state["table"] == [{"attack": "6♠", "defence": None}]
    assert mini.h.rooms.live.watching(record.id) == 2


async def test_a_stored_move_is_handed_to_the_streams_by_the_save_itself(mini: Mini) -> None:
    h = mini.h
    alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    live = h.rooms.live
    stream = live.open(record, 2, "en")
    assert await stream.next(0) is not None  # the state on connecting
    await h.deliver(alice.tap(h.hand_message(alice), "6♠"))
    # No wait: the frame was put there within the save (GameStore.saved), before the tap's
    # handling even returned.
    frame = await stream.next(0)
    assert frame is not None and b'"move":1' in frame and b"6\xe2\x99\xa0" in frame
    live.leave(stream)
    await h.settle()


async def test_streams_are_bounded_per_user_and_in_all(mini: Mini) -> None:
    h = mini.h
    _alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    live = Live(h.rooms.kit, h.rooms.screens, max_streams=3, max_per_user=1)
    first = live.open(record, 7, "en")
    again = live.open(record, 7, "en")  # the same user again: a reconnect, the old one ends
    assert first.closed and not again.closed and live.watching(record.id or 0) == 1
    live.open(record, 8, "en")
    live.open(record, 9, "en")
    with pytest.raises(TooMany):
        live.open(record, 10, "en")
    assert REGISTRY.get_sample_value("durak_miniapp_streams") == 3  # what an operator sees
    live.close()
    assert live.watching(record.id or 0) == 0 and again.closed
    assert REGISTRY.get_sample_value("durak_miniapp_streams") == 0


async def test_an_onlooker_costs_telegram_nothing(mini: Mini) -> None:
    h = mini.h
    alice, bob, group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    assert record.id is not None
    calls = len(h.fake.calls)
    dave = await mini.viewer(9, "Dave", ref_of(record.id))
    await dave.drop()
    await dave.connect()
    await mini.settle()
    assert len(h.fake.calls) == calls  # no Bot API call because someone watches
    assert dave.last["you"] is None and dave.last["hand"] is None
    # A move costs the same with the onlooker watching as without: its own calls only.
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    watched = h.fake.count("editMessageText") + h.fake.count("sendMessage")
    await dave.until(lambda s: s["move"] == 1)
    assert h.fake.count("editMessageText") + h.fake.count("sendMessage") == watched
    del bob, group


async def test_a_stop_ends_the_streams_instead_of_waiting_for_them(mini: Mini) -> None:
    h = mini.h
    _alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    viewer = await mini.viewer(9, "Dave", ref_of(record.id or 0))
    async with asyncio.timeout(WAIT):  # not the drain's 25 s
        await mini.web.drain()
    with pytest.raises(AssertionError, match="ended"):
        await viewer.until(lambda s: False)


# ---------------------------------------------------------------- the page, and followers


async def test_the_page_and_its_files_are_served_compressed_and_nothing_else(mini: Mini) -> None:
    page = await mini.client.get(mini.base, headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-encoding"] == "gzip" and "telegram-web-app.js" in page.text
    raw = await mini.client.get(mini.base, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers
    assert gzip.compress(raw.content) and raw.content.startswith(b"<!doctype html>")
    bare = await mini.client.get(mini.base.rstrip("/"), follow_redirects=False)
    assert bare.status_code == 301 and bare.headers["location"] == "/app/"
    index = await mini.client.get(mini.base + "static/index.html")
    assert index.status_code == 200 and index.headers["cache-control"].startswith("public")
    for name in ("nothing.js", "..%2Fauth.py", ".hidden", "%2E%2E"):
        assert (await mini.client.get(mini.base + "static/" + name)).status_code == 404


async def test_a_worker_that_does_not_lead_answers_the_api_503_but_serves_the_page(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path / "x.sqlite3", webapp_url="https://bot.example/app/")
    standby = build_application(settings)  # never started: no rooms, as on a standby
    web = WebServer(Health(database=lambda: None), "127.0.0.1", 0, extend=MiniApp(standby).install)
    await web.start()
    try:
        async with httpx.AsyncClient(trust_env=False) as client:
            base = f"http://127.0.0.1:{web.port}/app/"
            now = standby.bot_data["clock"]().timestamp()
            session = await client.post(
                base + "api/session", json={"init_data": init_data(now, 1, "Alice")}
            )
            assert session.status_code == 503 and session.headers["retry-after"] == "2"
            assert session.json()["message"] == TR.t("en", "app-unavailable")
            assert (await client.get(base + "api/leader")).status_code == 503
            assert (await client.get(base)).status_code == 200
    finally:
        await web.close()


async def test_the_leader_says_so_for_a_proxys_health_check(mini: Mini) -> None:
    assert (await mini.client.get(mini.base + "api/leader")).status_code == 200


async def test_an_onlookers_view_names_the_seats_without_a_card_in_hand(mini: Mini) -> None:
    h = mini.h
    _alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    dave: Viewer = await mini.viewer(9, "Dave", ref_of(record.id or 0), "de")
    state = dave.last
    assert [(s["name"], s["cards"], s["role"]) for s in state["seats"]] == [
        ("Alice", 2, "attacker"),
        ("Bob", 2, "defender"),
    ]
    assert state["status"] == TR.t("de", "table-waiting", names="Alice")
    assert state["trump"] == {"suit": "♣", "card": "A♣"} and state["stock"] == 3  # (A♣ too)


async def test_a_quiet_stream_gets_a_ping_to_keep_proxies_from_closing_it(
    mini: Mini, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = mini.h
    _alice, _bob, _group, record = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    monkeypatch.setattr(routes, "HEARTBEAT", 0.05)  # (15 s in production)
    dave = await mini.viewer(9, "Dave", ref_of(record.id))
    await dave.pinged()
    assert len(dave.states) == 1  # a ping is no state
