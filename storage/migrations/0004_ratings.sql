-- Schema version 4: ratings (openskill Plackett-Luce) per (scope, player), and the chat
-- setting that hides computer players from the leaderboard. The displayed rating
-- (mu - 3 sigma) stays in the indexed column `rating`.
ALTER TABLE player_stats ADD COLUMN mu REAL;
ALTER TABLE player_stats ADD COLUMN sigma REAL;
ALTER TABLE chat_settings ADD COLUMN show_computers INTEGER NOT NULL DEFAULT 1
    CHECK (show_computers IN (0, 1));
