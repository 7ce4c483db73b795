"""Files: error-safe writes, the CSV/TSV reader, JSON Lines, SQLite files, the gold lock, Ctrl-C."""
