"""Who opened the Mini App: Telegram's `initData`, verified, and the session token the page
then carries (docs/miniapp.md, "Security").

`initData` is a query string Telegram signs with the bot's token: its `hash` is
hex(HMAC-SHA256(key=secret, msg=data_check_string)), where secret =
HMAC-SHA256(key="WebAppData", msg=bot token) and data_check_string is every other field,
sorted by key, as "key=value" lines joined by "\\n". `verify_init_data` recomputes it and
compares in constant time (`hmac.compare_digest`), then checks `auth_date`: at most
`MAX_AGE` seconds old and at most `MAX_AHEAD` in the future. A refusal says why:
"missing" (no initData, no hash, no user), "forged" (a hash that does not match, or a field
that cannot be read), "expired" (too old, or from the future).

The session token (`issue_session`, `read_session`) is the server's own: the user's id,
language and expiry, signed with a key derived from the bot token (HMAC-SHA256 keyed
"DurakMiniAppSession"): neither the token nor a key made from it ever leaves the server.

A game is named to the page by a reference that cannot be guessed (`game_ref`: "g<id>-" and
a tag made with another key derived from the bot token): game ids count up, and an onlooker
should watch only a game whose link they were given (the group's Table button), not every
game by trying numbers.

`sign_init_data` signs fields as Telegram would: for tests and a local sandbox.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import parse_qsl, urlencode

import orjson

MAX_AGE: Final = 24 * 3600.0
"""Seconds an initData stays good after Telegram signed it (`auth_date`)."""
MAX_AHEAD: Final = 60.0
"""Seconds `auth_date` may lie ahead of this server's clock (clocks differ a little)."""
SESSION_SECONDS: Final = 3600.0
"""How long a session token is good for; the page asks for a new one when it runs out."""
MAX_INIT_DATA: Final = 8192
"""Characters of initData read at most (Telegram's are a few hundred)."""

Reason = Literal["forged", "expired", "missing"]


class Refused(Exception):
    """initData or a session token that is not taken, and why."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason: Reason = reason


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """The user Telegram vouches for."""

    id: int
    name: str
    language_code: str | None


@dataclass(frozen=True, slots=True)
class InitData:
    user: WebAppUser
    auth_date: float
    start_param: str | None


@dataclass(frozen=True, slots=True)
class Session:
    user_id: int
    lang: str
    expires: float


def _secret(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def _check_string(fields: Mapping[str, str]) -> bytes:
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields) if k != "hash").encode()


def sign_init_data(bot_token: str, fields: Mapping[str, str]) -> str:
    """`fields` as Telegram sends them (each value a string: `user` is JSON), with the hash
    Telegram would put there: for tests and a local sandbox."""
    digest = hmac.new(_secret(bot_token), _check_string(fields), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def _fields(init_data: str) -> dict[str, str]:
    if not init_data or len(init_data) > MAX_INIT_DATA:
        raise Refused("missing" if not init_data else "forged")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise Refused("forged") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):  # a field twice: which one was signed?
        raise Refused("forged")
    return fields


def verify_init_data(
    bot_token: str, init_data: str, *, now: float, max_age: float = MAX_AGE
) -> InitData:
    """The verified initData, or `Refused` with the reason."""
    fields = _fields(init_data)
    given = fields.get("hash")
    if not given:
        raise Refused("missing")
    expected = hmac.new(_secret(bot_token), _check_string(fields), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), given.lower().encode()):
        raise Refused("forged")
    try:
        auth_date = float(int(fields["auth_date"]))
    except (KeyError, ValueError):
        raise Refused("forged") from None
    if auth_date < now - max_age or auth_date > now + MAX_AHEAD:
        raise Refused("expired")
    raw = fields.get("user")
    if raw is None:  # opened without a user (an inline query's chat type): nobody to seat
        raise Refused("missing")
    try:
        user = orjson.loads(raw)
        user_id = int(user["id"])
        name = " ".join(str(user.get(k) or "") for k in ("first_name", "last_name")).strip()
        language = user.get("language_code")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        raise Refused("forged") from None
    return InitData(
        WebAppUser(user_id, name or str(user_id), str(language) if language else None),
        auth_date,
        fields.get("start_param") or None,
    )


def unverified_language(init_data: str) -> str | None:
    """The `language_code` an initData claims, unverified: only to say in the user's
    language why it was refused."""
    try:
        user = orjson.loads(dict(parse_qsl(init_data[:MAX_INIT_DATA])).get("user", "{}"))
        language = user.get("language_code")
    except (orjson.JSONDecodeError, AttributeError, ValueError):
        return None
    return language if isinstance(language, str) else None


# ---------------------------------------------------------------- the session token


def _session_key(bot_token: str) -> bytes:
    return hmac.new(b"DurakMiniAppSession", bot_token.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue_session(
    bot_token: str, user_id: int, lang: str, *, now: float, seconds: float = SESSION_SECONDS
) -> str:
    """A token naming the user (and their language) until `now + seconds`."""
    body = _b64(orjson.dumps({"u": user_id, "l": lang, "e": int(now + seconds)}))
    mac = hmac.new(_session_key(bot_token), body.encode(), hashlib.sha256).digest()
    return f"{body}.{_b64(mac)}"


def read_session(bot_token: str, token: str | None, *, now: float) -> Session:
    """The session a token names, or `Refused` ("missing", "forged", "expired")."""
    if not token:
        raise Refused("missing")
    body, _, mac = token.partition(".")
    expected = _b64(hmac.new(_session_key(bot_token), body.encode(), hashlib.sha256).digest())
    if not mac or not hmac.compare_digest(expected.encode(), mac.encode()):
        raise Refused("forged")
    try:
        data = orjson.loads(_unb64(body))
        session = Session(int(data["u"]), str(data["l"]), float(data["e"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise Refused("forged") from None
    if session.expires < now:
        raise Refused("expired")
    return session


# ---------------------------------------------------------------- game references


def _game_tag(bot_token: str, game_id: int) -> str:
    key = hmac.new(b"DurakMiniAppGame", bot_token.encode(), hashlib.sha256).digest()
    return _b64(hmac.new(key, str(game_id).encode(), hashlib.sha256).digest()[:9])


def game_ref(bot_token: str, game_id: int) -> str:
    """The page's name of a game ("g<id>-<tag>": at most 64 characters of A-Z, a-z, 0-9,
    _ and -, as Telegram's `startapp` takes)."""
    return f"g{game_id}-{_game_tag(bot_token, game_id)}"


def parse_game_ref(bot_token: str, ref: object) -> int | None:
    """The game a reference names, None for anything else (a guessed or altered one)."""
    if not isinstance(ref, str) or len(ref) > 64 or not ref.startswith("g"):
        return None
    number, _, tag = ref[1:].partition("-")
    if not number.isdigit() or len(number) > 18:
        return None
    game_id = int(number)
    if not hmac.compare_digest(tag.encode(), _game_tag(bot_token, game_id).encode()):
        return None
    return game_id
