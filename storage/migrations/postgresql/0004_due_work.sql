-- PostgreSQL schema version 4, as SQLite's 10: when the bot next has work on a game without
-- an update (its deadline, the half-time warning, a computer's move), written with every
-- save. Each worker claims the chats that are due by it (`GameRepository.claim_due`: FOR
-- UPDATE SKIP LOCKED), so work left by a worker that died is done by another.
-- Games stored before: their deadline, until their next save.
ALTER TABLE games ADD COLUMN due_us BIGINT;
UPDATE games SET due_us = deadline_us WHERE status IN ('lobby', 'running');
CREATE INDEX games_due ON games (due_us)
    WHERE status IN ('lobby', 'running') AND due_us IS NOT NULL;
