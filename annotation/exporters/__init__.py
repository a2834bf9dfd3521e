"""Byte-stable writers for releases and judgements (pure: they take plain dicts, never querysets)."""
