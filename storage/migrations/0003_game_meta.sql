-- Schema version 3: the bot's own state of a game (chat title, recent events, player
-- languages, who left how), kept as compact JSON next to the engine state.
ALTER TABLE games ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
