"""fork_map: the same results as a loop, in forked processes that leave the caller's database connection alone."""

import os

import pytest

from portal import parallel
from portal.parallel import fork_map, processes_for


@pytest.fixture(autouse=True)
def single_threaded(request, monkeypatch):
    """The suite itself may run other threads (a live server for the browser tests), beside which fork_map rightly
    refuses to fork; these tests are about forking, so they see the process as single-threaded unless marked."""
    if "real_threads" not in request.keywords:
        monkeypatch.setattr(parallel, "_other_threads_alive", lambda: False)


def _pid_and_square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def test_results_come_back_in_task_order_from_other_processes():
    results = fork_map(_pid_and_square, list(range(7)), processes=2)
    assert [square for _, square in results] == [n * n for n in range(7)]
    assert os.getpid() not in {pid for pid, _ in results}


def test_one_process_or_small_work_runs_in_the_caller():
    assert {pid for pid, _ in fork_map(_pid_and_square, [1, 2], processes=1)} == {os.getpid()}
    assert processes_for(10) == 1
    assert processes_for(1_000_000) is None


@pytest.mark.real_threads
def test_a_process_with_other_threads_alive_does_not_fork(monkeypatch):
    """Forking beside other threads can leave a lock held for ever in the child (gunicorn's threaded workers)."""
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert {pid for pid, _ in fork_map(_pid_and_square, [1, 2, 3], processes=2)} == {os.getpid()}
    finally:
        release.set()
        other.join()
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)  # whatever else the suite runs
    assert os.getpid() not in {pid for pid, _ in fork_map(_pid_and_square, [1, 2, 3], processes=2)}


def test_the_children_see_the_callers_data_without_pickling():
    unpicklable = {"lock": __import__("threading").Lock(), "rows": list(range(100))}

    def total(start: int) -> int:  # a closure over an object pickle refuses: fine, nothing is pickled
        return sum(unpicklable["rows"][start:])

    assert fork_map(total, [0, 50], processes=2) == [4950, sum(range(50, 100))]


def test_a_failing_task_raises_in_the_caller():
    def fail(n: int) -> int:
        if n == 1:  # one task only: when several fail, which error arrives first is up to the scheduler
            raise ValueError(f"task {n} refused")
        return n

    with pytest.raises(ValueError, match="task 1 refused"):
        fork_map(fail, [1, 2], processes=2)


def test_nested_calls_run_serially_in_the_child():
    def inner(n: int) -> list[tuple[int, int]]:
        return fork_map(_pid_and_square, [n, n + 1], processes=2)

    for pairs in fork_map(inner, [1, 10], processes=2):
        assert len({pid for pid, _ in pairs}) == 1  # the child ran both itself
        assert pairs[0][0] != os.getpid()


@pytest.mark.django_db(transaction=True)
def test_the_callers_database_connection_survives_the_children():
    from django.db import connection, transaction

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMPORARY TABLE parallel_probe (n int) ON COMMIT DROP")
            cursor.execute("INSERT INTO parallel_probe VALUES (1)")
        assert fork_map(_pid_and_square, [2, 3], processes=2)[1][1] == 9
        with connection.cursor() as cursor:  # same session, same open transaction
            cursor.execute("SELECT n FROM parallel_probe")
            assert cursor.fetchall() == [(1,)]
