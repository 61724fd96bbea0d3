"""Database boundary: repositories over SQLite (aiosqlite)."""
