-- PostgreSQL schema version 6, as SQLite's 12: one worker plays (issue #30). The send ledger,
-- the games' due times and redraw marks are gone (the leader keeps them in memory); inbox
-- holds the updates any worker took from Telegram until the leader has handled them;
-- bot_state what the bot last told Telegram.
--
-- leader (PostgreSQL only: SQLite has one process): the lease of the worker that plays. One
-- row: who holds it (`holder`, a worker's name, also the application_name of its
-- connections), the backend pid of its lease connection, its epoch (one more at every
-- change of hands; the leader's game saves check it) and when it runs out unless renewed.
DROP TABLE send_calls;
DROP TABLE send_pauses;
DROP TABLE send_screens;
ALTER TABLE games DROP COLUMN due_us;
ALTER TABLE games DROP COLUMN state_version;
ALTER TABLE games DROP COLUMN redraw_us;
ALTER TABLE games DROP COLUMN drawn_version;
-- The group's message with a finished game's result, once it is posted: a leader that takes
-- over posts the result of a game that ended without it (the one before died in between).
-- Games finished before are taken as posted (0: its id not known).
ALTER TABLE games ADD COLUMN result_message_id BIGINT;
UPDATE games SET result_message_id = 0 WHERE status = 'finished';
CREATE INDEX games_result_to_post ON games (id)
    WHERE status = 'finished' AND result_message_id IS NULL;
-- and the games that ended lately, whose last table and hands it shows again
CREATE INDEX games_ended ON games (updated_us) WHERE status = 'finished';

CREATE TABLE inbox (
    update_id BIGINT PRIMARY KEY,
    body TEXT NOT NULL,
    received_us BIGINT NOT NULL,
    handled_us BIGINT
);
CREATE INDEX inbox_waiting ON inbox (update_id) WHERE handled_us IS NULL;
CREATE INDEX inbox_age ON inbox (received_us);
INSERT INTO inbox (update_id, body, received_us, handled_us)
    SELECT update_id, '', handled_us, handled_us FROM handled_updates;
DROP TABLE handled_updates;

CREATE TABLE bot_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE leader (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    epoch BIGINT NOT NULL,
    expires_us BIGINT NOT NULL
);
INSERT INTO leader (id, holder, pid, epoch, expires_us) VALUES (1, '', 0, 0, 0);
