"""The Mini App's routes on the bot's web server (`bot.web`), under `/app/`:

- `GET /app/`, `GET /app/static/{name}`: the page (`bot/miniapp/static/`), any worker;
- `POST /app/api/session`: initData in, a session token, the page's words and the game to
  show out;
- `GET /app/api/events`: the game's states as server-sent events (`bot.miniapp.live`);
- `POST /app/api/move`: a move, judged as a tap on the hand (`Moves.app_move`);
- `GET /app/api/leader`: 200 on the leader, 503 elsewhere (for a reverse proxy).

Only the leader plays (docs/architecture.md, "One leader plays"): the games, their locks
and their streams live in its memory. A worker that does not lead (a standby, or one still
starting) answers `/app/api/*` 503 with `Retry-After`; the page tries again, and a reverse
proxy in front of several workers sends it on to one that answers (`/readyz` says which).
The HTTP contract is docs/miniapp.md's.
"""

from __future__ import annotations

import gzip
import logging
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson
from aiohttp import web

from bot.callbacks import MoveData
from bot.config import Settings
from bot.i18n import Translator
from bot.kit import Person
from bot.miniapp import auth
from bot.miniapp.live import HEARTBEAT, TooMany
from bot.miniapp.views import strings
from bot.telegram.handlers import ROOMS_KEY
from engine import Resign, parse_action

if TYPE_CHECKING:
    from telegram.ext import Application

    from bot.play import Rooms
    from storage import GameRecord

logger = logging.getLogger(__name__)

STATIC: Final = Path(__file__).resolve().parent / "static"
PREFIX: Final = "/app"
RETRY_AFTER: Final = 2
"""Seconds a worker that does not lead asks the page to wait before trying again."""
MAX_BODY: Final = 16 * 1024
"""Bytes of an API request's body read at most (initData is a few hundred)."""
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_PAGE: Final = re.compile(r"[A-Za-z0-9-]{1,64}")
_TYPES: Final = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}
_COMPRESSIBLE: Final = frozenset({".html", ".js", ".css", ".svg", ".json"})


def _page(given: str | None) -> str:
    """The page's name for itself (letters, digits, `-`; at most 64), else none."""
    return given if given is not None and _PAGE.fullmatch(given) else ""


def _json(body: dict[str, Any], status: int = 200, **headers: str) -> web.Response:
    return web.Response(
        body=orjson.dumps(body),
        status=status,
        content_type="application/json",
        charset="utf-8",
        headers={"Cache-Control": "no-store", **headers},
    )


@dataclass(frozen=True, slots=True)
class _File:
    body: bytes
    gzipped: bytes | None
    content_type: str
    mtime: float


class MiniApp:
    """The routes, over the application (its settings, translator, clock and, while this
    worker leads, its rooms)."""

    def __init__(self, application: Application, static: Path = STATIC) -> None:  # type: ignore[type-arg]
        self.application = application
        self.static = static
        self._files: dict[str, _File] = {}

    @property
    def settings(self) -> Settings:
        settings: Settings = self.application.bot_data["settings"]
        return settings

    @property
    def tr(self) -> Translator:
        tr: Translator = self.application.bot_data["translator"]
        return tr

    def now(self) -> float:
        return float(self.application.bot_data["clock"]().timestamp())

    @property
    def _token(self) -> str:
        return self.settings.bot_token.get_secret_value()

    def install(self, app: web.Application) -> None:
        """Add the routes (and the end of every stream at shutdown) to the web app."""
        app.router.add_get(PREFIX, self.redirect)
        app.router.add_get(f"{PREFIX}/", self.index)
        app.router.add_get(PREFIX + "/static/{name}", self.file)
        app.router.add_post(f"{PREFIX}/api/session", self.session)
        app.router.add_get(f"{PREFIX}/api/events", self.events)
        app.router.add_post(f"{PREFIX}/api/move", self.move)
        app.router.add_get(f"{PREFIX}/api/leader", self.leader)
        app.on_shutdown.append(self._shutdown)

    def _rooms(self) -> Rooms | None:
        rooms: Rooms | None = self.application.bot_data.get(ROOMS_KEY)
        return rooms

    async def _shutdown(self, _: web.Application) -> None:
        rooms = self._rooms()
        if rooms is not None:  # streams never end by themselves: a stop must not wait for them
            rooms.live.close()

    # ---------------------------------------------------------------- the page

    async def redirect(self, _: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(f"{PREFIX}/")  # (the page calls relative URLs)

    async def index(self, request: web.Request) -> web.Response:
        return self._serve(request, "index.html", cache="no-cache")

    async def file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if not _NAME.fullmatch(name) or ".." in name:
            raise web.HTTPNotFound()
        return self._serve(request, name, cache="public, max-age=300")

    def _serve(self, request: web.Request, name: str, *, cache: str) -> web.Response:
        path = self.static / name
        try:
            mtime = path.stat().st_mtime
        except OSError:
            raise web.HTTPNotFound() from None
        if not path.is_file():
            raise web.HTTPNotFound()
        known = self._files.get(name)
        if known is None or known.mtime != mtime:
            body = path.read_bytes()
            suffix = path.suffix.lower()
            kind = _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
            packed = gzip.compress(body, mtime=0) if suffix in _COMPRESSIBLE else None
            known = self._files[name] = _File(body, packed, kind, mtime)
        headers = {"Cache-Control": cache, "Vary": "Accept-Encoding"}
        body = known.body
        if known.gzipped is not None and "gzip" in request.headers.get("Accept-Encoding", ""):
            body = known.gzipped
            headers["Content-Encoding"] = "gzip"
        text = known.content_type.startswith("text/") or known.content_type.endswith(
            ("json", "xml")
        )
        return web.Response(
            body=body,
            content_type=known.content_type,
            charset="utf-8" if text else None,
            headers=headers,
        )

    # ---------------------------------------------------------------- the API

    def _unavailable(self, lang: str | None) -> web.Response:
        return _json(
            {"error": "unavailable", "message": self.tr.t(lang, "app-unavailable")},
            503,
            **{"Retry-After": str(RETRY_AFTER)},
        )

    def _bad(self, lang: str | None) -> web.Response:
        return _json({"error": "bad-request", "message": self.tr.t(lang, "app-bad-request")}, 400)

    def _refused(self, reason: auth.Reason, lang: str | None, request: web.Request) -> web.Response:
        """401, said in the language the initData claims, else the browser's (a page opened
        outside Telegram has no initData: its reader still gets their language)."""
        lang = lang or self._browser_language(request)
        return _json({"error": reason, "message": self.tr.t(lang, f"app-refused-{reason}")}, 401)

    def _browser_language(self, request: web.Request) -> str | None:
        """The first language of Accept-Language the bot speaks."""
        for part in request.headers.get("Accept-Language", "")[:200].split(","):
            found = self.tr.available(part.split(";")[0].strip() or None)
            if found is not None:
                return found
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | None:
        if request.content_length is not None and request.content_length > MAX_BODY:
            return None
        raw = await request.content.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY:
            return None
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return body if isinstance(body, dict) else None

    async def leader(self, _: web.Request) -> web.Response:
        """200 on the worker that plays, 503 elsewhere: where a reverse proxy sends the API
        (the Caddyfile's health check)."""
        if self._rooms() is None:
            return self._unavailable(None)
        return _json({"leading": True})

    async def session(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        init_data = body.get("init_data") or "" if body is not None else None
        lang = auth.unverified_language(init_data) if isinstance(init_data, str) else None
        if body is None or not isinstance(init_data, str):
            return self._bad(lang)
        try:
            data = auth.verify_init_data(self._token, init_data, now=self.now())
        except auth.Refused as refused:
            return self._refused(refused.reason, lang, request)
        rooms = self._rooms()
        lang = self.tr.normalize(data.user.language_code)
        if rooms is None:
            return self._unavailable(lang)
        start = body.get("start") or data.start_param
        game_id = auth.parse_game_ref(self._token, start)
        if game_id is not None and await rooms.store.chat_of_game(game_id) is None:
            game_id = None
        if game_id is None:  # the player's own running game (the one waiting for them first)
            person = Person(data.user.id, data.user.name, data.user.language_code)
            mine = await rooms.store.running_games_of(person)
            mine.sort(key=lambda r: not (r.game is not None and person.player_id in r.game.to_act))
            game_id = mine[0].id if mine else None
        token = auth.issue_session(self._token, data.user.id, lang, now=self.now())
        return _json(
            {
                "token": token,
                "lang": lang,
                "strings": strings(self.tr, lang),
                "game": auth.game_ref(self._token, game_id) if game_id is not None else None,
            }
        )

    def _session(self, token: str | None) -> auth.Session:
        return auth.read_session(self._token, token, now=self.now())

    async def _record(self, rooms: Rooms, game_id: int) -> GameRecord | None:
        """The game as the leader holds it (live), else as stored (a finished game)."""
        chat_id = await rooms.store.chat_of_game(game_id)
        if chat_id is None:
            return None
        record = rooms.store.live(chat_id)
        if record is None or record.id != game_id:
            try:
                record = await rooms.store.game(game_id)
            except Exception:  # (NotFound, or a database that cannot read now)
                return None
        return record if record.game is not None else None

    async def events(self, request: web.Request) -> web.StreamResponse:
        try:
            session = self._session(request.query.get("token"))
        except auth.Refused as refused:
            return self._refused(refused.reason, None, request)
        lang = session.lang
        game_id = auth.parse_game_ref(self._token, request.query.get("game"))
        if game_id is None:
            return self._bad(lang)
        rooms = self._rooms()
        if rooms is None:
            return self._unavailable(lang)
        record = await self._record(rooms, game_id)
        if record is None:
            return _json({"error": "no-game", "message": self.tr.t(lang, "app-no-game")}, 404)
        live = rooms.live
        try:
            stream = live.open(record, session.user_id, lang, _page(request.query.get("page")))
        except TooMany:
            return _json(
                {"error": "busy", "message": self.tr.t(lang, "app-busy")},
                429,
                **{"Retry-After": str(RETRY_AFTER * 5)},
            )
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # (nginx: no buffering; Caddy: flush_interval -1)
            }
        )
        try:
            await response.prepare(request)
            await response.write(b"retry: 2000\n\n")
            while True:
                data = await stream.next(HEARTBEAT)
                if stream.closed:
                    break
                await response.write(data if data is not None else b": ping\n\n")
        except (ConnectionError, RuntimeError):  # the client left (a write to a closed
            pass  # transport), or the server is stopping
        finally:
            live.leave(stream)
        return response

    async def move(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else None
        try:
            session = self._session(token)
        except auth.Refused as refused:
            return self._refused(refused.reason, None, request)
        lang = session.lang
        body = await self._body(request)
        bad = {"ok": False, "text": self.tr.t(lang, "app-bad-request")}
        if body is None:
            return _json(bad, 400)
        game_id, move = auth.parse_game_ref(self._token, body.get("game")), body.get("move")
        if game_id is None or not isinstance(move, int) or isinstance(move, bool) or move < 0:
            return _json(bad, 400)
        try:
            action = parse_action(body.get("action"))
        except (ValueError, TypeError):
            return _json(bad, 400)
        if isinstance(action, Resign):  # giving up is /leave's, with its confirmation
            return _json(bad, 400)
        rooms = self._rooms()
        if rooms is None:
            return self._unavailable(lang)
        person = Person(session.user_id, str(session.user_id), lang)
        judged = await rooms.moves.app_move(
            person=person, data=MoveData(game_id, move, action), seen=rooms.live
        )
        return _json({"ok": judged.applied, "text": judged.text})
