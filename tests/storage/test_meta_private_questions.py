"""The /leave questions asked in players' private chats are kept with the game (so that a
bot started anew deletes them when the game ends): stored and read back, and what is not a
message id is dropped on reading."""

from __future__ import annotations

from storage import GameMeta


def test_private_questions_are_stored_and_read_back() -> None:
    meta = GameMeta(private_questions={"2": 41})
    stored = meta.to_json()
    assert stored["private_questions"] == {"2": 41}
    assert GameMeta.from_json(stored).private_questions == {"2": 41}
    assert "private_questions" not in GameMeta().to_json()  # nothing written when empty


def test_what_is_not_a_message_id_is_dropped() -> None:
    read = GameMeta.from_json({"private_questions": {"2": 41, "3": "x", "4": True}})
    assert read.private_questions == {"2": 41}
    assert GameMeta.from_json({"private_questions": [1]}).private_questions == {}
    assert "private_questions" not in GameMeta.from_json({"private_questions": {}}).extra
