"""The demo: users for every role, the public sample and a half-done benchmark, so that every page has content.

An app of its own so that a deployment need not install it: ``make run`` does (``manage.py load_demo``); the
production settings leave it out.
"""
