"""History at plant scale: time partitions (PostgreSQL), retention by age, 1-minute and 1-hour
rollups kept current from a dirty-minute log, and the reads the trend selector makes at each
resolution. How it fits together: docs/HISTORY.md."""
