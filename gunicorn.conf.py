"""gunicorn settings for every way the portal is served (Docker image, compose, `make stack`).

gunicorn reads this file from its working directory; command-line flags (``--bind``, ``--workers``) override it.
Threaded workers: most of a request's time is spent waiting on PostgreSQL, so a few threads per process keep the
cores busy while one process stays small. This is the set-up `bench/bench_review.py` and `bench/bench_ranking.py`
measure (4 processes × 4 threads on 2 cores; docs/benchmarks.md).
"""

import os

workers = int(os.environ.get("WEB_WORKERS", "4"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "4"))
# Seconds an idle connection is kept: longer than a reviewer's usual pause between items (about 20 s), so their next
# request reuses it, and as long as nginx's default. A client whose pause runs past it finds the connection closed
# and opens another; one that sends at the very moment it closes gets no answer and must send again (browsers do;
# every POST of the API is safe to repeat).
keepalive = 75
