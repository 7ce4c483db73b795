"""Files: error-safe writes, the CSV/TSV reader and writer, JSON Lines, SQLite files, the gold lock,
Ctrl-C, and the names of the files written beside an output."""
