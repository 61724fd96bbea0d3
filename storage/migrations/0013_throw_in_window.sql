-- Schema version 13: the throw-in window (issue #31). Once every attack card is covered (or
-- the defender takes), the players who could still throw in get this many seconds; then the
-- bout ends as if all had passed. 0: the bout waits for each of them to tap Done.
ALTER TABLE chat_settings ADD COLUMN throw_in_window INTEGER NOT NULL DEFAULT 5
    CHECK (throw_in_window >= 0);
