"""What players and groups choose is stored: turn alerts (a player's own choice, or the
group's default), and a player's choice survives the bot noting the player again."""

from __future__ import annotations

from storage import ChatSettings, Database, Player


async def test_a_players_turn_alerts_are_stored_and_default_to_the_groups(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(user_id=1, name="Alice"))
        await tx.players.upsert(player=Player(user_id=2, name="Bob", turn_alerts=False))
    async with db.transaction(readonly=True) as tx:
        assert (await tx.players.get(user_id=1)).turn_alerts is None  # as the group sets it
        assert (await tx.players.get(user_id=2)).turn_alerts is False


async def test_a_groups_default_for_turn_alerts_is_on_and_stored(db: Database) -> None:
    async with db.transaction() as tx:
        assert (await tx.chats.get(chat_id=-1)).turn_alerts is True
        await tx.chats.save(settings=ChatSettings(chat_id=-1, turn_alerts=False))
    async with db.transaction(readonly=True) as tx:
        assert (await tx.chats.get(chat_id=-1)).turn_alerts is False
