-- Schema version 10: when the bot next has work on a game without an update (its deadline,
-- the half-time warning, a computer's move), written with every save. Workers on a shared
-- database (PostgreSQL) claim the chats that are due by it; the one process on SQLite
-- schedules from its memory, so SQLite keeps no index on it (none to update on each move).
-- Games stored before: their deadline, until their next save.
ALTER TABLE games ADD COLUMN due_us INTEGER;
UPDATE games SET due_us = deadline_us WHERE status IN ('lobby', 'running');
