"""Run calls at the same moment from threads, each on its own PostgreSQL connection (for race tests)."""

from __future__ import annotations

import threading

from django.db import connection


def at_once(*calls) -> list:
    """Start every call together (a barrier) and return each one's result, or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    outcomes: list = [None] * len(calls)

    def worker(i, call):
        try:
            barrier.wait()
            outcomes[i] = call()
        except Exception as exc:  # noqa: BLE001 - returned to the test, which asserts on it
            outcomes[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return outcomes
