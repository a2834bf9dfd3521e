"""Pages timed through Django's test client, as an organizer's browser asks for them (bench scripts only)."""

from __future__ import annotations

import statistics
import time


def time_pages(client, pages, *, prefix: str = "", repeat: int = 10) -> None:
    """GET each ``(name, url)`` of ``pages`` ``repeat`` times (each must answer 200) and print the median and the
    slowest."""
    for name, url in pages:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200, (url, response.status_code)
        print(
            f"{prefix}{name}: median {statistics.median(times) * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms "
            f"({repeat} requests)"
        )
