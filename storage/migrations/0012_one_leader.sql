-- Schema version 12: one worker plays (issue #30). What let every worker play every chat is
-- gone: the send ledger (send_calls, send_pauses, send_screens), the games' due times and
-- redraw marks (due_us, state_version, redraw_us, drawn_version). The leader keeps all of
-- that in memory, as one process always did.
--
-- inbox: the updates Telegram posted (webhook mode), stored by whichever worker took the
-- POST before it answered 200; the leader handles them in order and marks each handled in
-- the transaction of its changes. Kept 48 hours, so that a redelivery is recognised. The
-- ids handled before this version come along without their bodies.
--
-- bot_state: what the bot last told Telegram (its webhook, its command menus), as a digest,
-- so that a new leader calls setWebhook and setMyCommands only when something changed.
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
ALTER TABLE games ADD COLUMN result_message_id INTEGER;
UPDATE games SET result_message_id = 0 WHERE status = 'finished';
CREATE INDEX games_result_to_post ON games (id)
    WHERE status = 'finished' AND result_message_id IS NULL;
-- and the games that ended lately, whose last table and hands it shows again
CREATE INDEX games_ended ON games (updated_us) WHERE status = 'finished';

CREATE TABLE inbox (
    update_id INTEGER PRIMARY KEY,
    body TEXT NOT NULL,          -- the update's JSON as posted ('' for an id kept from before)
    received_us INTEGER NOT NULL,
    handled_us INTEGER           -- NULL: waiting for the leader
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
