-- Schema version 1: games, players, chat settings, finished games.
-- Datetimes are integer microseconds since the Unix epoch, UTC (columns *_us).
-- Structured values are compact JSON text. Booleans are 0/1.
-- CHECKs list allowed values with OR, not IN: SQLite evaluates a CHECK's IN list by building a
-- temporary table for every row written, which made bulk inserts three times slower.

-- Every game of every group chat, from lobby to finish. At most one lobby/running game per chat
-- (the partial unique index; queries for active games spell its WHERE the same way to use it).
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (
        status = 'lobby' OR status = 'running' OR status = 'finished' OR status = 'cancelled'
    ),
    language TEXT NOT NULL,
    rules TEXT NOT NULL,                 -- engine Rules as JSON
    state TEXT,                          -- engine Game.to_dict() as JSON; NULL in the lobby
    lobby TEXT NOT NULL,                 -- opener, seats, lobby message id as JSON
    table_message_id INTEGER,
    hand_messages TEXT NOT NULL,         -- {player_id: message_id} as JSON
    deadline_us INTEGER,                 -- when the current turn times out
    timeouts TEXT NOT NULL,              -- {player_id: consecutive timeouts} as JSON
    created_us INTEGER NOT NULL,
    started_us INTEGER,
    updated_us INTEGER NOT NULL,
    version INTEGER NOT NULL CHECK (version >= 1)
);

CREATE UNIQUE INDEX games_one_active_per_chat
    ON games (chat_id) WHERE status IN ('lobby', 'running');

CREATE INDEX games_running_deadline
    ON games (deadline_us) WHERE status = 'running';

CREATE TABLE players (
    user_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    language TEXT,
    can_message INTEGER NOT NULL CHECK (can_message = 0 OR can_message = 1),
    updated_us INTEGER NOT NULL
);

CREATE TABLE chat_settings (
    chat_id INTEGER PRIMARY KEY,
    language TEXT,
    preset TEXT NOT NULL,
    rules TEXT NOT NULL,                 -- engine Rules as JSON
    turn_timeout INTEGER CHECK (turn_timeout IS NULL OR turn_timeout >= 0),  -- seconds; 0 = off
    updated_us INTEGER NOT NULL
);

-- Finished games are never deleted: every statistic derives from them.
CREATE TABLE finished_games (
    id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    game_id INTEGER UNIQUE REFERENCES games (id),
    rules TEXT NOT NULL,
    started_us INTEGER NOT NULL,
    ended_us INTEGER NOT NULL,
    bouts INTEGER NOT NULL CHECK (bouts >= 0),
    draw INTEGER NOT NULL CHECK (draw = 0 OR draw = 1),
    durak TEXT,                          -- player_id of the durak; NULL for a draw
    practice INTEGER NOT NULL CHECK (practice = 0 OR practice = 1),
    CHECK ((draw = 1 AND durak IS NULL) OR (draw = 0 AND durak IS NOT NULL))
);

CREATE INDEX finished_games_chat ON finished_games (chat_id, ended_us);

CREATE TABLE finished_game_players (
    finished_game_id INTEGER NOT NULL REFERENCES finished_games (id),
    seat INTEGER NOT NULL CHECK (seat >= 0),
    player_id TEXT NOT NULL,
    user_id INTEGER,
    name TEXT NOT NULL,
    is_computer INTEGER NOT NULL CHECK (is_computer = 0 OR is_computer = 1),
    result TEXT NOT NULL CHECK (
        result = 'won' OR result = 'durak' OR result = 'resigned' OR result = 'timed_out'
        OR result = 'draw'
    ),
    place INTEGER NOT NULL CHECK (place >= 1),
    PRIMARY KEY (finished_game_id, seat)
) WITHOUT ROWID;

-- No index by player: leaderboards and player records read player_stats (schema version 2),
-- and an index keyed by player would be written at random, slowing every insert down.
