"""The bot's Prometheus metrics (prometheus-client), served on `/metrics` by `bot.ops.health`.

Every metric is defined here, in the default registry (which also carries the client's
`process_*` and `python_gc_*` metrics), and labelled only with values from a short, fixed
list: kinds of update, Bot API method names (the few the bot's code calls), outcomes,
computer levels, results. Never a chat id, a user id or a game id: each value of a label is
a time series of its own. docs/operating.md lists them for dashboards and alerts.

The functions below are what the rest of the bot calls; each costs a dictionary look-up and
an addition (bench/bot.py measures no difference, docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut

logger = logging.getLogger(__name__)

# Seconds: from a tap's few milliseconds to a stalled call's timeout.
_FAST: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

UPDATES: Final = Counter(
    "durak_updates",
    "Updates handled, by kind: command, callback (a button tap) or other",
    ["kind"],
)
UPDATE_SECONDS: Final = Histogram(
    "durak_update_handling_seconds",
    "From the start of an update's handling to its handler's end (after its last Bot API "
    "call; what the sender sends afterwards not included), by kind",
    ["kind"],
    buckets=_FAST,
)
API_CALLS: Final = Counter(
    "durak_bot_api_calls",
    "The bot's own Bot API calls (not long polling), by method and outcome: ok, 400, 403, "
    "429, timeout, network, other",
    ["method", "outcome"],
)
API_SECONDS: Final = Histogram(
    "durak_bot_api_call_seconds",
    "Duration of the bot's own Bot API calls, by method",
    ["method"],
    buckets=_FAST,
)
RETRY_AFTER: Final = Histogram(
    "durak_retry_after_seconds",
    "The wait Telegram asked for in each 429 answer",
    buckets=(1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 900),
)
TELEGRAM_FAULTS: Final = Counter(
    "durak_telegram_faults",
    "Telegram's faults met by the bot's own calls, each one WARNING line, by method and "
    "kind: 429, timeout, network (a 5xx answer or a broken connection)",
    ["method", "kind"],
)
REPLIES_LOST: Final = Counter(
    "durak_replies_lost",
    "Replies and tap answers given up after Telegram's faults outlasted their retries, by method",
    ["method"],
)
SENDS_DEFERRED: Final = Counter(
    "durak_sends_deferred",
    "Sends held back by a chat's budget of messages, sent later",
)
DUPLICATES_DELETED: Final = Counter(
    "durak_duplicates_deleted",
    "Copies of a message deleted: a send that lost its answer had landed, and was sent again",
)
TURN_ALERTS_HELD: Final = Counter(
    "durak_turn_alerts_held",
    "Turns shown by an edit instead of a new, notifying message: the bot was at Telegram's "
    "bot-wide ceiling",
)
SENDS_MERGED: Final = Counter(
    "durak_sends_merged",
    "Sends made unnecessary by a later one to the same message (only the latest state sent)",
)
WEBHOOK_POSTS: Final = Counter(
    "durak_webhook_posts",
    "Telegram's posts to the webhook, by the answer's status: 200, 400 (no update), 403 "
    "(no secret), 503 (not stored: Telegram delivers it again)",
    ["status"],
)
GAMES_RUNNING: Final = Gauge("durak_games_running", "Games running now (practice included)")
LOBBIES_OPEN: Final = Gauge("durak_lobbies_open", "Lobbies open now")
MINIAPP_STREAMS: Final = Gauge(
    "durak_miniapp_streams", "Mini App event streams open now (players and onlookers)"
)
GAMES_STARTED: Final = Counter(
    "durak_games_started", "Games started, by mode: group or practice", ["mode"]
)
GAMES_FINISHED: Final = Counter(
    "durak_games_finished",
    "Games ended, by mode (group, practice) and result: durak, draw, or cancelled (no result)",
    ["mode", "result"],
)
DB_SECONDS: Final = Histogram(
    "durak_db_transaction_seconds",
    "Database transactions, from holding the database to the COMMIT's outcome, by kind: "
    "write, read, save (a move's one-statement save)",
    ["kind"],
    buckets=_FAST,
)
COMPUTER_SECONDS: Final = Histogram(
    "durak_computer_decision_seconds",
    "A computer player's decision (its COMPUTER_DELAY not included), by level",
    ["level"],
    buckets=_FAST,
)
LOOP_LAG: Final = Histogram(
    "durak_event_loop_lag_seconds",
    "How late the event loop ran a task due at a set time (measured every "
    "LAG_INTERVAL seconds): time the loop was busy with other work",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)

LAG_INTERVAL: Final = 0.5
"""Seconds between two measurements of the event loop's lag."""

LEVELS: Final = frozenset({"easy", "medium", "hard"})
UPDATE_KINDS: Final = ("command", "callback", "other")


def outcome_of(error: BaseException | None) -> str:
    """A Bot API call's outcome as the `outcome` label: ok, 400, 403, 429, timeout, network
    or other (python-telegram-bot makes `BadRequest` and `TimedOut` network errors: they are
    told apart first)."""
    if error is None:
        return "ok"
    if isinstance(error, RetryAfter):
        return "429"
    if isinstance(error, BadRequest):
        return "400"
    if isinstance(error, Forbidden):
        return "403"
    if isinstance(error, TimedOut):
        return "timeout"
    if isinstance(error, NetworkError):
        return "network"
    return "other"


_calls: dict[tuple[str, str], Counter] = {}
_call_seconds: dict[str, Histogram] = {}


def api_call(method: str, error: BaseException | None, seconds: float) -> None:
    """Count one Bot API call of `method` that took `seconds` and raised `error` (None: ok)."""
    outcome = outcome_of(error)
    counter = _calls.get((method, outcome))
    if counter is None:
        counter = _calls[method, outcome] = API_CALLS.labels(method, outcome)
    counter.inc()
    histogram = _call_seconds.get(method)
    if histogram is None:
        histogram = _call_seconds[method] = API_SECONDS.labels(method)
    histogram.observe(seconds)
    if isinstance(error, RetryAfter):
        after = error.retry_after  # a timedelta (PTB_TIMEDELTA, bot/__init__.py) or an int
        RETRY_AFTER.observe(after.total_seconds() if isinstance(after, timedelta) else float(after))


def telegram_fault(method: str, error: BaseException) -> str:
    """Count one of Telegram's faults (a 429, a timeout, a network error or 5xx) met by a
    call of `method`; its kind, as labelled."""
    kind = outcome_of(error)
    TELEGRAM_FAULTS.labels(method, kind).inc()
    return kind


def reply_lost(method: str) -> None:
    """A reply (`sendMessage`) or a tap's answer was given up after its retries."""
    REPLIES_LOST.labels(method).inc()


_updates = {kind: UPDATES.labels(kind) for kind in UPDATE_KINDS}
_update_seconds = {kind: UPDATE_SECONDS.labels(kind) for kind in UPDATE_KINDS}


def webhook_answered(status: int) -> None:
    WEBHOOK_POSTS.labels(str(int(status))).inc()


LEADING: Final = Gauge(
    "durak_leading",
    "1 while this worker leads (plays every game), 0 while it stands by",
)
LEAD_TAKEN: Final = Counter(
    "durak_lead_taken",
    "Times this worker took the lead (its first start included)",
)
INBOX_HANDLED: Final = Counter(
    "durak_inbox_updates",
    "Updates the leader took from the inbox (webhook mode), by outcome: handled, or later "
    "(the database could not store its changes: handled again later)",
    ["outcome"],
)


def leading(now: bool) -> None:
    LEADING.set(1 if now else 0)
    if now:
        LEAD_TAKEN.inc()


def inbox_handled(stored: bool) -> None:
    INBOX_HANDLED.labels("handled" if stored else "later").inc()


def update_handled(kind: str, seconds: float) -> None:
    """An update of `kind` (one of `UPDATE_KINDS`) was handled in `seconds`."""
    _updates[kind].inc()
    _update_seconds[kind].observe(seconds)


_transactions = {kind: DB_SECONDS.labels(kind) for kind in ("write", "read", "save")}


def transaction_done(kind: str, seconds: float) -> None:
    """The observer `storage.Database` calls after each transaction (see `bot.app`)."""
    histogram = _transactions.get(kind)
    if histogram is not None:
        histogram.observe(seconds)


def computer_decided(level: str | None, seconds: float) -> None:
    COMPUTER_SECONDS.labels(level if level in LEVELS else "other").observe(seconds)


def watch_games(count: Callable[[], tuple[int, int]]) -> None:
    """Read the running games and open lobbies from `count` (running, lobbies) at each
    scrape; the last call wins (one application per process)."""
    GAMES_RUNNING.set_function(lambda: count()[0])
    LOBBIES_OPEN.set_function(lambda: count()[1])


async def watch_loop_lag(interval: float = LAG_INTERVAL) -> None:
    """Until cancelled: every `interval` seconds, how late the loop woke this task."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + interval
        await asyncio.sleep(interval)
        LOOP_LAG.observe(max(0.0, loop.time() - due))
