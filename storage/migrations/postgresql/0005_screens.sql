-- PostgreSQL schema version 5, as SQLite's 11: what keeps the messages of a game in order
-- across workers. send_screens: for each kept message (a table, a hand, a lobby), the
-- newest game version a worker sent into it, when, and until when that call may still be
-- on its way; a claim with an older version is refused (`storage.sends`). games: the
-- version of the last save that changed the game (not only message ids), when a worker
-- redraws its table if none has drawn that state by then (claimed as due work), and the
-- version whose table was drawn last.
CREATE TABLE send_screens (
    key TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    at DOUBLE PRECISION NOT NULL,         -- its last call: claimed, then answered
    busy_until DOUBLE PRECISION NOT NULL  -- that call may be on its way until then (0: answered)
);
CREATE INDEX send_screens_at ON send_screens (at);
ALTER TABLE games ADD COLUMN state_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN redraw_us BIGINT;
ALTER TABLE games ADD COLUMN drawn_version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX games_redraw ON games (redraw_us)
    WHERE status = 'running' AND redraw_us IS NOT NULL;
