"""Ingest: which files are text and where they split (`chunking`), files made beads (`files`)."""
