"""gunicorn settings for every way the portal is served (Docker image, compose, `make stack`).

gunicorn reads this file from its working directory; command-line flags (``--bind``, ``--workers``) override it.
Threaded workers: most of a request's time is spent waiting on PostgreSQL, so a few threads per process keep the
cores busy while one process stays small. This is the set-up `bench/bench_review.py` and `bench/bench_ranking.py`
measure (4 processes × 4 threads on 2 cores; docs/benchmarks.md).
"""

import os
import sys

# The settings' typed readers (portal.env): a malformed WEB_WORKERS stops the start naming the variable. Every
# worker process shares the login throttling's counts only through REDIS_URL, which the production profile requires
# (config/settings.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portal.env import env_int  # noqa: E402

workers = env_int("WEB_WORKERS", 4, minimum=1)
worker_class = "gthread"
threads = env_int("WEB_THREADS", 4, minimum=1)
# Seconds an idle connection is kept: longer than a reviewer's usual pause between items (about 20 s), so their next
# request reuses it, and as long as nginx's default. A client whose pause runs past it finds the connection closed
# and opens another; one that sends at the very moment it closes gets no answer and must send again (browsers do;
# every POST of the API is safe to repeat).
#
# A kept connection stays with the process that accepted it, and a gthread process accepts whatever arrives, busy or
# not. When clients connect all at once and then never pause (an overload), one process can end up holding most of
# the connections, and its clients wait behind each other while the others are served at once: at saturation most
# clients are slow and a few fast, which is the p95 far above the median (bench/bench_review.py --think 0 prints how
# evenly the reviewers were served). WEB_KEEPALIVE=0 closes each connection after its response, so every request is
# accepted afresh and the processes share an overload evenly. It does not shorten the overload's waits, and the new
# connection per request costs throughput and some latency at every load, so it is not the default (measured in
# docs/benchmarks.md, "The tail at saturation, measured"). Behind nginx's default proxying, which opens a connection
# per request, the portal sees the same.
keepalive = env_int("WEB_KEEPALIVE", 75, minimum=0)
