"""Strict readers of users' input files, shared by the pure packages and the apps (no Django)."""
