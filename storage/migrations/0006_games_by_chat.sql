-- Schema version 6: a chat's games by id, for its latest game (the /stats title, a lobby's
-- "play again") and for moving a chat's games when a group becomes a supergroup. Finished
-- games stay in this table for good, so without it both read every game ever played.
CREATE INDEX games_chat ON games (chat_id, id);
