-- Schema version 5: the per-player statistics queries stay index-only as players grow.
-- A player's chats (chats_of): by player, newest first, without scanning every row.
CREATE INDEX player_stats_player ON player_stats (player_id, last_played_us);

-- The leaderboard index also carries is_computer, so counting the players ahead of someone
-- (rank_of) reads only the index, never the table.
DROP INDEX player_stats_leaderboard;
CREATE INDEX player_stats_leaderboard
    ON player_stats (scope, rating DESC, durak_rate, games DESC, player_id, is_computer);
