-- Schema version 2: the send ledger (storage/sends.py). Several workers count their calls
-- into each chat here, so that together they keep to Telegram's limits.
CREATE TABLE send_calls (
    chat_id BIGINT NOT NULL,      -- 0: the bot's own window
    at DOUBLE PRECISION NOT NULL  -- seconds since the epoch
);
CREATE INDEX send_calls_by_chat ON send_calls (chat_id, at);
CREATE TABLE send_pauses (
    chat_id BIGINT PRIMARY KEY,
    until DOUBLE PRECISION NOT NULL  -- a 429's end, seconds since the epoch
);
