-- PostgreSQL schema version 3, as SQLite's 9: the Telegram updates the bot has handled
-- (webhook mode), so that a redelivered update is recognised and not applied twice.
CREATE TABLE handled_updates (
    update_id BIGINT PRIMARY KEY,
    handled_us BIGINT NOT NULL
);

CREATE INDEX handled_updates_age ON handled_updates (handled_us);
