"""CPU-bound work spread over the machine's cores in forked processes.

A freeze writes four export formats to hash them; each is pure Python work (JSON, CSV) that one process runs on one
core. :func:`fork_map` runs such pieces in processes forked from the caller, so the children start at once and
share the caller's data as it is when called (nothing large is pickled: only each task's index goes in and its
result comes back).

What the children may do: compute and write files. They must not use the caller's database connection (they never
touch Django's ORM) and they leave through ``multiprocessing``'s own exit, which skips the parent's clean-up, so the
parent's connection and transaction are untouched. Where ``fork`` does not exist, or for a single task, the work runs
in the calling process, one piece after another, with the same results; so does work that a child of such a
pool hands to ``fork_map`` again.

Only a process with one thread forks. A fork copies the caller's memory but only the calling thread: a lock that
another thread held at that moment (the logging module's, the C library's allocator's, a database driver's) stays
held in the child for ever, and the child hangs when it takes it. gunicorn's threaded workers serve a freeze with
other threads alive, so there the pieces run one after another in the request's thread (slower, never stuck); the
management commands and Celery's worker processes are single-threaded and fork.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Below this many rows, forking costs more than it saves (a few tens of milliseconds per process).
PARALLEL_FROM_ROWS = 5_000


def processes_for(rows: int) -> int | None:
    """The ``processes`` to give :func:`fork_map` for work over ``rows`` rows: one (no fork) for small work."""
    return None if rows >= PARALLEL_FROM_ROWS else 1


# The work of this child's pool, installed when the child starts (a forked child receives it without pickling).
_work: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def fork_map(function: Callable[[T], R], tasks: Sequence[T], *, processes: int | None = None) -> list[R]:
    """``[function(task) for task in tasks]``, the tasks run in up to ``processes`` (default: the cores) forked
    processes. Results are pickled back; an exception in a task is raised here."""
    processes = min(len(tasks), processes or os.cpu_count() or 1)
    # A pool's own processes may not fork again (multiprocessing forbids it): work given to them runs serially.
    if (
        processes < 2
        or multiprocessing.current_process().daemon
        or "fork" not in multiprocessing.get_all_start_methods()
        or _other_threads_alive()
    ):
        return [function(task) for task in tasks]
    context = multiprocessing.get_context("fork")
    with context.Pool(processes, initializer=_install, initargs=(function, tasks)) as pool:
        return pool.map(_run, range(len(tasks)), chunksize=1)


def _other_threads_alive() -> bool:
    """True when this process runs other Python threads, beside which it must not fork (see the module's docstring)."""
    return threading.active_count() > 1


def _install(function: Callable[[Any], Any], tasks: Sequence[Any]) -> None:
    global _work
    _work = (function, tasks)


def _run(index: int) -> Any:
    assert _work is not None  # installed when the child started
    function, tasks = _work
    return function(tasks[index])
