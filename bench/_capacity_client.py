"""The load generator of bench_capacity.py, run as its own process (gevent patches the standard library).

Open loop: reviews start at random (Poisson) times at ``--rate`` reviews per second, whatever the server's latency,
so a slow server meets a growing queue as real users would, instead of the load easing off as it does when a fixed
set of clients waits for each answer. Each review is "next" then "submit" by one reviewer (one keep-alive connection
each); with ``--then-next`` it is one "review-then-next" request, whose answer is the reviewer's next lease; every
reviewer takes a lease before the clock starts (steady state: a person on the review page holds the lease they
are working on), and asks "next" later only when an answer held none. A reviewer takes one review at a time, so a review that finds every reviewer busy waits for one (counted).
One gevent loop and a C HTTP parser keep the generator's own CPU small and free of thread scheduling: the latencies
measured are the server's, not the client's.

Reads the reviewers' tokens from ``--tokens`` (one per line); prints one JSON object: every request's latency in ms
by kind, errors, the ids of the assignments whose review was acknowledged, and the achieved rate.
"""

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
from gevent.queue import Queue  # noqa: E402
from geventhttpclient import HTTPClient  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--rate", type=float, required=True, help="reviews started per second")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--floor", help="post both requests of a review to this path instead (bench_capacity --floor)")
    parser.add_argument(
        "--then-next",
        action="store_true",
        help="send each review with review-then-next/, which answers with the reviewer's next lease; 'next' is then "
        "asked only by a reviewer who holds none",
    )
    args = parser.parse_args()
    tokens = [line.strip() for line in open(args.tokens) if line.strip()]
    rng = random.Random(args.seed)
    free: Queue = Queue()
    held: dict[str, dict | None] = {}  # --then-next: the lease each reviewer was handed with their last review
    for token in tokens:
        free.put((token, HTTPClient("127.0.0.1", args.port, connection_timeout=30, network_timeout=60)))
    result: dict = {"next_ms": [], "submit_ms": [], "errors": [], "acknowledged": [], "waited_for_reviewer": 0}

    def post(client: HTTPClient, token: str, path: str, body: dict) -> tuple[int, bytes, float]:
        started = time.perf_counter()
        response = client.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        data = response.read()
        return response.status_code, data, (time.perf_counter() - started) * 1000

    def floor(client: HTTPClient, token: str) -> None:
        status, data, ms = post(client, token, args.floor, {})
        result["next_ms"].append(ms)
        body = {
            "idempotency_key": "floor",
            "verdict": "correct",
            "relevance": 5,
            "comment": "bench",
            "active_seconds": 10,
        }
        status_2, data_2, ms = post(client, token, args.floor, body)
        result["submit_ms"].append(ms)
        if status == status_2 == 200:
            result["acknowledged"].append(0)
        else:
            result["errors"].append(f"floor {status} {status_2} {(data_2 if status == 200 else data)[:120]!r}")

    def review() -> None:
        if free.empty():
            result["waited_for_reviewer"] += 1
        token, client = free.get()
        try:
            if args.floor:  # the same two requests and bodies, answered without a review's work
                floor(client, token)
                return
            lease = held.pop(token, None)
            if lease is None:
                status, data, ms = post(client, token, "/api/review/next/", {})
                result["next_ms"].append(ms)
                if status != 200:
                    result["errors"].append(f"next {status} {data[:120]!r}")
                    return
                lease = json.loads(data)
            verdict = rng.choices(["correct", "incorrect", "cannot_tell"], [0.8, 0.15, 0.05])[0]
            body = {
                "idempotency_key": lease["idempotency_key"],
                "verdict": verdict,
                **({"cannot_tell_reason": "excerpt"} if verdict == "cannot_tell" else {}),
                "relevance": rng.choice([3, 4, 5, 5, 5]),
                "comment": "bench",
                "active_seconds": 10,
            }
            path = f"/api/review/assignments/{lease['id']}/{'review-then-next' if args.then_next else 'review'}/"
            status, data, ms = post(client, token, path, body)
            result["submit_ms"].append(ms)
            if status == 201:
                result["acknowledged"].append(lease["id"])
                if args.then_next:
                    held[token] = json.loads(data)["next"]
            else:
                result["errors"].append(f"submit {status} {data[:120]!r}")
        except (OSError, ValueError) as exc:  # a broken connection or garbled answer: an error of the run
            result["errors"].append(f"{type(exc).__name__}: {exc}")
            client.close()
            client = HTTPClient("127.0.0.1", args.port, connection_timeout=30, network_timeout=60)
        finally:
            free.put((token, client))

    if args.then_next and not args.floor:
        # Steady state: each reviewer already holds the lease they are working on, as a person on the review page
        # does, so the clock does not start on a burst of 300 first "next" calls (untimed, not counted).
        def take_lease() -> None:
            token, client = free.get()
            try:
                status, data, _ = post(client, token, "/api/review/next/", {})
                if status == 200:
                    held[token] = json.loads(data)
            finally:
                free.put((token, client))

        gevent.joinall([gevent.spawn(take_lease) for _ in tokens], timeout=120)

    started = time.perf_counter()
    greenlets = []
    at = 0.0
    while at < args.seconds:
        delay = started + at - time.perf_counter()
        if delay > 0:
            gevent.sleep(delay)
        greenlets.append(gevent.spawn(review))
        at += rng.expovariate(args.rate)
    gevent.joinall(greenlets, timeout=120)
    elapsed = time.perf_counter() - started
    result["offered_per_s"] = len(greenlets) / args.seconds
    result["achieved_per_s"] = len(result["acknowledged"]) / elapsed
    result["elapsed_s"] = elapsed
    print(json.dumps(result))


if __name__ == "__main__":
    main()
