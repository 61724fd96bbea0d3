-- Schema version 2: per-(scope, player) aggregates, so leaderboards and player records read a
-- few rows instead of scanning every finished game. Kept up to date in the same transaction
-- that records a finished game. scope is the chat id, or 0 for "all chats" (Telegram never uses
-- chat id 0). Practice games are not counted. rating stays NULL until the stats issue fills it.
-- streak: games in a row up to the latest, > 0 not lost as durak, < 0 lost as durak.

CREATE TABLE player_stats (
    scope INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    user_id INTEGER,
    name TEXT NOT NULL,                  -- as of the latest game
    is_computer INTEGER NOT NULL CHECK (is_computer = 0 OR is_computer = 1),
    games INTEGER NOT NULL CHECK (games >= 1),
    durak_count INTEGER NOT NULL,
    won INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    resigned INTEGER NOT NULL,
    timed_out INTEGER NOT NULL,
    durak_rate REAL NOT NULL,            -- durak_count / games, kept for the index
    rating REAL,
    streak INTEGER NOT NULL,
    last_game_id INTEGER NOT NULL,       -- finished_games.id of the latest game counted
    last_played_us INTEGER NOT NULL,
    PRIMARY KEY (scope, player_id)
);

-- The leaderboard order, so "top 10" reads about 10 index entries.
CREATE INDEX player_stats_leaderboard
    ON player_stats (scope, rating DESC, durak_rate, games DESC, player_id);

-- Backfill from the games finished under schema version 1.
INSERT INTO player_stats (
    scope, player_id, user_id, name, is_computer, games, durak_count, won, draws, resigned,
    timed_out, durak_rate, rating, streak, last_game_id, last_played_us
)
WITH counted AS (
    SELECT
        CASE WHEN scopes.overall = 1 THEN 0 ELSE fg.chat_id END AS scope,
        p.player_id, p.user_id, p.name, p.is_computer, p.result,
        fg.id AS fg_id, fg.ended_us,
        CASE WHEN fg.durak = p.player_id THEN 1 ELSE 0 END AS is_durak
    FROM finished_game_players AS p
    JOIN finished_games AS fg ON fg.id = p.finished_game_id
    CROSS JOIN (SELECT 0 AS overall UNION ALL SELECT 1 AS overall) AS scopes
    WHERE fg.practice = 0
),
ranked AS (
    SELECT counted.*,
        ROW_NUMBER() OVER (PARTITION BY scope, player_id ORDER BY fg_id DESC) AS recency
    FROM counted
),
latest AS (
    SELECT * FROM ranked WHERE recency = 1
),
breaks AS (
    SELECT ranked.scope, ranked.player_id, MIN(ranked.recency) AS first_change
    FROM ranked
    JOIN latest ON latest.scope = ranked.scope AND latest.player_id = ranked.player_id
    WHERE ranked.is_durak <> latest.is_durak
    GROUP BY ranked.scope, ranked.player_id
),
totals AS (
    SELECT scope, player_id,
        COUNT(*) AS games,
        SUM(is_durak) AS durak_count,
        SUM(CASE WHEN result = 'won' THEN 1 ELSE 0 END) AS won,
        SUM(CASE WHEN result = 'draw' THEN 1 ELSE 0 END) AS draws,
        SUM(CASE WHEN result = 'resigned' THEN 1 ELSE 0 END) AS resigned,
        SUM(CASE WHEN result = 'timed_out' THEN 1 ELSE 0 END) AS timed_out,
        MAX(ended_us) AS last_played_us
    FROM counted
    GROUP BY scope, player_id
)
SELECT
    totals.scope, totals.player_id, latest.user_id, latest.name, latest.is_computer,
    totals.games, totals.durak_count, totals.won, totals.draws, totals.resigned,
    totals.timed_out, totals.durak_count * 1.0 / totals.games, NULL,
    (COALESCE(breaks.first_change, totals.games + 1) - 1)
        * (CASE WHEN latest.is_durak = 1 THEN -1 ELSE 1 END),
    latest.fg_id, totals.last_played_us
FROM totals
JOIN latest ON latest.scope = totals.scope AND latest.player_id = totals.player_id
LEFT JOIN breaks ON breaks.scope = totals.scope AND breaks.player_id = totals.player_id;
