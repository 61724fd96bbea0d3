-- Schema version 7: turn alerts. A player whose turn comes after a pause gets their hand as a
-- new, notifying message. Each player may switch that off (NULL: the group's default), and
-- each group sets the default for its players (on).
ALTER TABLE players ADD COLUMN turn_alerts INTEGER;
ALTER TABLE chat_settings ADD COLUMN turn_alerts INTEGER NOT NULL DEFAULT 1;
