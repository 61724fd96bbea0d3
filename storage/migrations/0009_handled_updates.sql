-- Schema version 9: the Telegram updates the bot has handled (webhook mode). Telegram delivers
-- an update again when it got no 200 for it (a worker that died after its commit, say), for
-- about a day; an update id found here is answered 200 and not applied twice. Written in the
-- transaction of the update's first save, or right after it was handled; old rows are pruned.
CREATE TABLE handled_updates (
    update_id INTEGER PRIMARY KEY,
    handled_us INTEGER NOT NULL
);

CREATE INDEX handled_updates_age ON handled_updates (handled_us);
