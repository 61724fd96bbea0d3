-- Schema version 14: where each player's first hand message of a game would lie (issue #34).
-- {player_id: the latest message id the bot knew in that player's private chat when the game
-- was dealt} as JSON: a hand that landed while the bot was killed (its id never stored) lies
-- after it, and the next process finds and deletes it once it has sent the hand again.
ALTER TABLE games ADD COLUMN hand_floors TEXT NOT NULL DEFAULT '{}';
