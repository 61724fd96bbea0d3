"""A scripted stand-in for the Mini App's server, for the page's browser tests.

It serves the page's static folder at ``/app/`` and answers the three calls of the contract
(docs/miniapp-page.md) on 127.0.0.1: ``api/session`` (a token, the ``app-*`` strings of a
language read from ``locales/``, the game; or a scripted refusal), ``api/events`` (server-sent
events: the current state on every connection, then each state the test `push`es; `drop`
ends every open stream, `expire` makes the tokens given so far answer 401,
`events_answer` refuses every stream with a scripted status) and ``api/move``
(recorded in `moves`, answered with `move_answer`, after `move_gate` if one is set);
`wait_until` waits for what the browser asked. The states a test starts from are built by
`mid_bout`, `onlooker`, `thrower` and `game_over`.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from fluent.syntax import FluentParser, ast

ROOT = Path(__file__).resolve().parent.parent.parent
STATIC = ROOT / "bot" / "miniapp" / "static"
LOCALES = ROOT / "locales"

State = dict[str, Any]


def app_strings(lang: str) -> dict[str, str]:
    """Every ``app-*`` message of ``locales/<lang>.ftl`` with its variables left as
    ``{ $name }``, as api/session hands them to the page."""
    resource = FluentParser(with_spans=False).parse(
        (LOCALES / f"{lang}.ftl").read_text(encoding="utf-8")
    )
    strings: dict[str, str] = {}
    for entry in resource.body:
        if not isinstance(entry, ast.Message) or not entry.id.name.startswith("app-"):
            continue
        if entry.value is None:
            continue
        parts: list[str] = []
        for element in entry.value.elements:
            if isinstance(element, ast.TextElement):
                parts.append(element.value)
            elif isinstance(element, ast.Placeable) and isinstance(
                element.expression, ast.VariableReference
            ):
                parts.append("{ $" + element.expression.id.name + " }")
            elif isinstance(element, ast.Placeable) and isinstance(
                element.expression, ast.StringLiteral
            ):
                parts.append(element.expression.value)
        strings[entry.id.name] = "".join(parts)
    return strings


NOW = 1_764_950_000.0


def _seat(
    pid: str, name: str, cards: int, role: str | None, to_act: bool, you: bool
) -> dict[str, Any]:
    return {
        "id": pid,
        "name": name,
        "computer": False,
        "cards": cards,
        "role": role,
        "to_act": to_act,
        "you": you,
    }


def _defend(attack: str, card: str) -> dict[str, Any]:
    return {
        "action": f"defend {attack} {card}",
        "card": card,
        "kind": "defend",
        "label": f"Cover {attack} with {card}",
    }


def mid_bout(version: int = 17) -> State:
    """Alice (the viewer) defends against two open cards mid-bout, 25 s on her clock."""
    return {
        "game": "g7",
        "version": version,
        "move": version,
        "lang": "en",
        "you": "1",
        "seats": [
            _seat("2", "Boris", 3, "attacker", False, False),
            _seat("1", "Alice", 6, "defender", True, True),
            _seat("3", "Clara", 5, "thrower", False, False),
        ],
        "table": [
            {"attack": "8♣", "defence": "K♣"},
            {"attack": "9♠", "defence": None},
            {"attack": "9♣", "defence": None},
        ],
        "trump": {"suit": "♥", "card": "7♥"},
        "stock": 12,
        "discard": 8,
        "deadline": NOW + 25,
        "now": NOW,
        "status": "Alice defends: two cards to cover.",
        "log": ["Last bout: 6♣ 8♦ beaten off", "Clara runs out of time"],
        "hand": ["6♥", "7♦", "10♠", "Q♥", "A♣", "9♦"],
        "legal": [
            _defend("9♠", "6♥"),
            _defend("9♣", "6♥"),
            _defend("9♠", "10♠"),
            _defend("9♠", "Q♥"),
            _defend("9♣", "Q♥"),
            _defend("9♣", "A♣"),
            {"action": "take", "card": None, "kind": "take", "label": "Take"},
        ],
        "over": False,
        "result": None,
    }


def onlooker(version: int = 17) -> State:
    """The same moment as `mid_bout`, seen by someone not seated."""
    state = mid_bout(version)
    state.update(you=None, hand=None, legal=[])
    for seat in state["seats"]:
        seat["you"] = False
    return state


def thrower(version: int = 18) -> State:
    """Alice may throw in a 9 or say she is done; Clara defends."""
    state = mid_bout(version)
    state["seats"] = [
        _seat("2", "Boris", 3, "attacker", False, False),
        _seat("1", "Alice", 6, "thrower", True, True),
        _seat("3", "Clara", 5, "defender", False, False),
    ]
    state["table"] = [{"attack": "9♠", "defence": "J♠"}]
    state["hand"] = ["6♥", "7♦", "10♠", "Q♥", "A♣", "9♦"]
    state["legal"] = [
        {"action": "attack 9♦", "card": "9♦", "kind": "attack", "label": "Throw in 9♦"},
        {"action": "pass", "card": None, "kind": "pass", "label": "Done"},
    ]
    state["status"] = "Alice may throw in."
    return state


def game_over(version: int = 40) -> State:
    """The end: Boris is the durak; the viewer went out."""
    state = mid_bout(version)
    state.update(
        seats=[
            _seat("2", "Boris", 4, None, False, False),
            _seat("1", "Alice", 0, "out", False, True),
            _seat("3", "Clara", 0, "out", False, False),
        ],
        table=[],
        trump={"suit": "♥", "card": None},
        stock=0,
        discard=32,
        deadline=None,
        status="",
        hand=[],
        legal=[],
        over=True,
        result="Game over\nBoris is the durak.",
    )
    return state


class MiniAppStandIn:
    """The stand-in server on 127.0.0.1; `url` is the page's address."""

    def __init__(self, state: State, *, lang: str = "en") -> None:
        self.state = state
        self.lang = lang
        self.game: str | None = str(state["game"])
        # (status, body) for api/session; None: a token and the strings.
        self.session_answer: tuple[int, dict[str, Any]] | None = None
        self.move_answer: dict[str, Any] = {"ok": True, "text": None}
        # (status, body) for api/events asked with a good token; None: the stream.
        self.events_answer: tuple[int, dict[str, Any]] | None = None
        self.events_asked = 0  # every api/events request, answered or refused
        self.sessions: list[dict[str, Any]] = []
        self.moves: list[tuple[str, dict[str, Any]]] = []  # (Authorization, body)
        # while set and not yet set free, api/move waits before it answers (a slow server)
        self.move_gate: asyncio.Event | None = None
        self.connects = 0  # event streams opened (with a good token)
        self.refused = 0  # event streams refused (401)
        self._tokens: set[str] = set()
        self._numbers = itertools.count(1)
        self._streams: set[asyncio.Queue[State | None]] = set()
        self._runner: web.AppRunner | None = None
        self._seen = asyncio.Condition()  # notified at every session, stream and move
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/app/"

    # -- what a test scripts -------------------------------------------------------

    def push(self, state: State) -> None:
        """A new state: sent at once on every open stream, and on every connect after."""
        self.state = state
        for queue in self._streams:
            queue.put_nowait(copy.deepcopy(state))

    def drop(self) -> None:
        """Ends every open event stream (as a lost connection or a restarted server)."""
        for queue in self._streams:
            queue.put_nowait(None)

    def expire(self) -> None:
        """The tokens given so far are no longer good (api/events and api/move: 401)."""
        self._tokens.clear()

    async def wait_until(self, done: Callable[[], bool], seconds: float = 10.0) -> None:
        """Returns once `done()` holds, checked at every session, stream and move this
        server sees (the browser calls on its own time)."""
        async with asyncio.timeout(seconds), self._seen:
            await self._seen.wait_for(done)

    async def _saw(self) -> None:
        async with self._seen:
            self._seen.notify_all()

    # -- the server ----------------------------------------------------------------

    async def __aenter__(self) -> MiniAppStandIn:
        app = web.Application()
        app.router.add_get("/app/", self._index)
        app.router.add_get("/app/static/{name}", self._static)
        app.router.add_post("/app/api/session", self._session)
        app.router.add_get("/app/api/events", self._events)
        app.router.add_post("/app/api/move", self._move)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.drop()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _index(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        path = STATIC / request.match_info["name"]
        if path.parent != STATIC or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    async def _session(self, request: web.Request) -> web.Response:
        self.sessions.append(await request.json())
        await self._saw()
        if self.session_answer is not None:
            status, body = self.session_answer
            return web.json_response(body, status=status)
        token = f"token-{next(self._numbers)}"
        self._tokens.add(token)
        strings = app_strings(self.lang)
        return web.json_response(
            {"token": token, "lang": self.lang, "strings": strings, "game": self.game}
        )

    def _refusal(self) -> web.Response:
        return web.json_response(
            {"error": "expired", "message": "This view has expired."}, status=401
        )

    async def _events(self, request: web.Request) -> web.StreamResponse:
        self.events_asked += 1
        if request.query.get("token") not in self._tokens:
            self.refused += 1
            await self._saw()
            return self._refusal()
        if self.events_answer is not None:
            status, body = self.events_answer
            await self._saw()
            return web.json_response(body, status=status)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        self.connects += 1
        await self._saw()
        queue: asyncio.Queue[State | None] = asyncio.Queue()
        queue.put_nowait(copy.deepcopy(self.state))
        self._streams.add(queue)
        try:
            while (state := await queue.get()) is not None:
                data = json.dumps(state, ensure_ascii=False)
                await response.write(
                    f"event: state\ndata: {data}\nid: {state['version']}\n\n".encode()
                )
        finally:
            self._streams.discard(queue)
        return response

    async def _move(self, request: web.Request) -> web.Response:
        authorization = request.headers.get("Authorization", "")
        if authorization.removeprefix("Bearer ") not in self._tokens:
            return self._refusal()
        self.moves.append((authorization, await request.json()))
        await self._saw()
        if self.move_gate is not None:
            await self.move_gate.wait()
        return web.json_response(self.move_answer)
