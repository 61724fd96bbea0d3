"""The Mini App's initData verification and session token (`bot.miniapp.auth`): what Telegram
signs is taken, anything else refused with its reason; the session token never carries the
bot token."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from urllib.parse import parse_qsl, urlencode

import pytest

from bot.miniapp.auth import (
    MAX_AGE,
    Refused,
    game_ref,
    issue_session,
    parse_game_ref,
    read_session,
    sign_init_data,
    unverified_language,
    verify_init_data,
)

TOKEN = "123456:TEST-TOKEN-abcdef"
NOW = 1_780_000_000.0
USER = json.dumps({"id": 42, "first_name": "Alice", "language_code": "de"})


def fields(**more: str) -> dict[str, str]:
    return {"auth_date": str(int(NOW)), "query_id": "AAHdF6IQ", "user": USER, **more}


def reason(init_data: str, now: float = NOW, token: str = TOKEN) -> str:
    with pytest.raises(Refused) as refused:
        verify_init_data(token, init_data, now=now)
    return refused.value.reason


def test_a_vector_computed_here_as_telegram_documents_it_is_taken() -> None:
    # Telegram's recipe, written out independently of bot.miniapp.auth.
    data = fields(start_param="g7")
    check = "\n".join(f"{k}={data[k]}" for k in sorted(data))
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    init_data = urlencode({**data, "hash": digest})
    assert sign_init_data(TOKEN, data) == init_data
    verified = verify_init_data(TOKEN, init_data, now=NOW)
    user = verified.user
    assert (user.id, user.name, user.language_code) == (42, "Alice", "de")
    assert verified.start_param == "g7"


def test_fields_in_another_order_are_the_same_data() -> None:
    signed = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    reordered = urlencode(dict(reversed(list(signed.items()))))
    assert verify_init_data(TOKEN, reordered, now=NOW).user.id == 42


def test_an_altered_field_is_forged() -> None:
    signed = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    signed["user"] = signed["user"].replace('"id": 42', '"id": 43')
    assert reason(urlencode(signed)) == "forged"
    added = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    added["start_param"] = "g1"
    assert reason(urlencode(added)) == "forged"


def test_another_bots_signature_is_forged() -> None:
    assert reason(sign_init_data("654321:OTHER-TOKEN-xyz", fields())) == "forged"


def test_a_field_twice_is_forged() -> None:
    signed = sign_init_data(TOKEN, fields())
    assert reason(signed + "&user=" + USER) == "forged"


def test_older_than_a_day_is_expired_and_a_day_is_still_fine() -> None:
    signed = sign_init_data(TOKEN, fields())
    assert verify_init_data(TOKEN, signed, now=NOW + MAX_AGE).user.id == 42
    assert reason(signed, now=NOW + MAX_AGE + 1) == "expired"


def test_from_the_future_beyond_a_minute_is_expired() -> None:
    signed = sign_init_data(TOKEN, fields())
    assert verify_init_data(TOKEN, signed, now=NOW - 59).user.id == 42
    assert reason(signed, now=NOW - 120) == "expired"


def test_no_hash_no_data_or_no_user_is_missing() -> None:
    signed = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    del signed["hash"]
    assert reason(urlencode(signed)) == "missing"
    assert reason("") == "missing"
    no_user = {k: v for k, v in fields().items() if k != "user"}
    assert reason(sign_init_data(TOKEN, no_user)) == "missing"


def test_garbage_is_forged_and_its_language_is_read_for_the_refusal_only() -> None:
    assert reason("%%%&&&=") == "forged"
    assert reason(sign_init_data(TOKEN, fields(auth_date="yesterday"))) == "forged"
    tampered = sign_init_data(TOKEN, fields()).replace("hash=", "hash=0")
    assert unverified_language(tampered) == "de"
    assert unverified_language("garbage") is None


def test_a_session_token_names_its_user_until_it_expires() -> None:
    token = issue_session(TOKEN, 42, "ru", now=NOW, seconds=3600)
    session = read_session(TOKEN, token, now=NOW + 3599)
    assert (session.user_id, session.lang) == (42, "ru")
    with pytest.raises(Refused) as refused:
        read_session(TOKEN, token, now=NOW + 3601)
    assert refused.value.reason == "expired"


def test_a_session_token_altered_or_made_with_another_key_is_forged() -> None:
    token = issue_session(TOKEN, 42, "en", now=NOW)
    body, _, mac = token.partition(".")
    other = issue_session(TOKEN, 43, "en", now=NOW)
    for forged in (
        f"{other.partition('.')[0]}.{mac}",  # another user's body, this signature
        issue_session("654321:OTHER-TOKEN-xyz", 42, "en", now=NOW),
        body,
        "x.y",
    ):
        with pytest.raises(Refused) as refused:
            read_session(TOKEN, forged, now=NOW)
        assert refused.value.reason == "forged"
    with pytest.raises(Refused) as refused:
        read_session(TOKEN, None, now=NOW)
    assert refused.value.reason == "missing"


def test_the_session_token_carries_no_part_of_the_bot_token() -> None:
    token = issue_session(TOKEN, 42, "en", now=NOW)
    secret = TOKEN.partition(":")[2]
    assert secret not in token and TOKEN.partition(":")[0] not in token
    initdata_secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).hexdigest()
    assert initdata_secret not in token


def test_a_game_reference_cannot_be_guessed_from_the_game_id() -> None:
    ref = game_ref(TOKEN, 17)
    assert ref.startswith("g17-") and parse_game_ref(TOKEN, ref) == 17
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", ref)  # what Telegram's startapp takes
    for guessed in ("g17", "g17-", ref.replace("g17-", "g18-"), ref[:-1], 17, None):
        assert parse_game_ref(TOKEN, guessed) is None
    assert parse_game_ref("654321:OTHER-TOKEN-xyz", ref) is None
