-- Schema version 8: the send ledger (storage/sends.py). Several workers on one database
-- count their calls into each chat here, so that together they keep to Telegram's limits.
-- One process (SQLite's case) counts in memory and leaves these tables empty.
CREATE TABLE send_calls (
    chat_id INTEGER NOT NULL,  -- 0: the bot's own window
    at REAL NOT NULL           -- seconds since the epoch
);
CREATE INDEX send_calls_by_chat ON send_calls (chat_id, at);
CREATE TABLE send_pauses (
    chat_id INTEGER PRIMARY KEY,
    until REAL NOT NULL        -- a 429's end, seconds since the epoch
);
