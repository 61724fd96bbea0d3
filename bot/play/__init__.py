"""The bot's features, one room each, and `Rooms`, which builds and wires them.

- `guide.Guide`: /help, /howto, the "How to play" and "Rules" buttons, a newcomer's how-to;
- `lobby.Lobbies`: /newgame, Join, Start, Cancel, /practice;
- `again.Again`: Play again ("Ready for another"), a lobby that starts by itself;
- `welcome.Welcome`: /start, the Join deep link, /newgame in a private chat;
- `moves.Moves`: a tap on a hand, why a card cannot be played, /hand;
- `computers.Computers`: computer players' moves;
- `deadlines.Deadlines`: half-time warnings, timeouts, expired lobbies, resuming;
- `moderation.Moderation`: /leave, /cancel, /kick, membership changes, migration;
- `chat.ChatRoom`: /rules, /stats, /settings.

Every room gets a chat's game through `bot.store.GameStore` (one unit of work per chat)
and sends through `bot.delivery` (`Outbox` for messages, `Screens` for tables and hands).
"""

from __future__ import annotations

from bot.delivery.screens import Screens
from bot.delivery.sender import Sender
from bot.kit import Kit
from bot.miniapp.live import Live
from bot.play.again import Again
from bot.play.chat import ChatRoom
from bot.play.computers import Computers
from bot.play.deadlines import Deadlines
from bot.play.guide import Guide
from bot.play.lobby import Lobbies
from bot.play.moderation import Moderation
from bot.play.moves import Moves
from bot.play.welcome import Welcome
from bot.store import GameStore


class Rooms:
    """The leader's (`bot.leader`: made anew each time a worker takes the lead): the store,
    delivery and every feature room, wired together."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.store = store = GameStore(kit)
        self.sender = Sender(kit.out, kit.out.budgets, kit.out.timing)
        kit.out.spawn = store.background.spawn  # (a tap's answer tried again: `Outbox.answer`)
        self.screens = screens = Screens(kit, store, self.sender)
        base = (kit, store, screens)
        self.computers = computers = Computers(*base)
        self.moves = moves = Moves(*base, computers=computers)
        self.guide = guide = Guide(*base)
        self.lobbies = lobbies = Lobbies(*base, computers=computers, guide=guide)
        self.welcome = Welcome(*base, lobbies=lobbies, moves=moves)
        self.again = again = Again(*base, lobbies=lobbies)
        lobbies.joined, lobbies.opened, lobbies.began = again.joined, again.opened, again.began
        self.deadlines = deadlines = Deadlines(
            *base, computers=computers, lobbies=lobbies, again=again
        )
        self.moderation = moderation = Moderation(*base, computers=computers, lobbies=lobbies)
        self.chat = ChatRoom(*base, lobbies=lobbies)
        self.live = live = Live(kit, screens)  # the Mini App's streams (bot.miniapp)
        # What the store and delivery report back.
        store.saved += [deadlines.saved, live.saved]
        store.loaded.append(deadlines.wake_if_earlier)
        store.forgotten += [screens.forget, deadlines.forget]
        store.show_again = deadlines.reloaded
        screens.bot_gone = moderation.bot_gone

    async def start(self) -> int:
        """After a (re)start: every stored lobby and game shown again; how many."""
        return await self.deadlines.resume_all()

    async def show_all_again(self) -> None:
        """Every live lobby and game shown again as it is (each under its chat's lock)."""
        for record in self.store.live_records():
            async with self.store.locked(record.chat_id):
                live = self.store.checked(record.chat_id)
                if live is not None:
                    await self.deadlines.show_again(live)

    async def close(self, *, flush: bool = True, within: float = 5.0) -> None:
        """The end of the lead: stop computer players' pending moves (they are re-planned by
        the next leader), background work and hands waiting to be shown again (the next
        leader shows every hand), publish pending table edits (``flush``: for `within`
        seconds at most; else none: another worker plays already), then schedule nothing
        more."""
        self.live.close()
        await self.computers.close()
        await self.store.background.close()
        await self.screens.close(flush=flush, within=within)


__all__ = [
    "Again",
    "ChatRoom",
    "Computers",
    "Deadlines",
    "Guide",
    "Lobbies",
    "Moderation",
    "Moves",
    "Rooms",
    "Welcome",
]
