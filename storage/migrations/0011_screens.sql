-- Schema version 11: what keeps the messages of a game in order across workers (issue #20).
-- send_screens: for each kept message (a table, a hand, a lobby), the newest game version a
-- worker sent into it, when, and until when its call may still be on its way; a claim
-- with an older version is refused (`storage.sends`). games: the version of the last save
-- that changed the game (not only message ids), when a worker redraws its table if none
-- has drawn that state by then, and the version whose table was drawn last. One process
-- (SQLite's case) keeps all this in memory: the table stays empty, redraw_us NULL.
CREATE TABLE send_screens (
    key TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    at REAL NOT NULL,          -- its last call: claimed, then answered (seconds since the epoch)
    busy_until REAL NOT NULL   -- that call may be on its way until then (0: answered)
);
CREATE INDEX send_screens_at ON send_screens (at);
ALTER TABLE games ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN redraw_us INTEGER;
ALTER TABLE games ADD COLUMN drawn_version INTEGER NOT NULL DEFAULT 0;
