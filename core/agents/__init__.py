"""Engines and the one bounded agent loop that every ARIA agent runs in."""
