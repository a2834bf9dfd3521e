"""The container's health check: GET /health/ on the local gunicorn the way the reverse proxy would send it.

Under the production profile a bare ``http://127.0.0.1:8000/health/`` fails twice: Django refuses the Host
``127.0.0.1`` (not in ALLOWED_HOSTS) and SecurityMiddleware redirects plain HTTP to HTTPS. Rather than widen
ALLOWED_HOSTS or exempt a path from the HTTPS redirect for every client, the check presents itself as the proxy
does: the first configured host name and ``X-Forwarded-Proto: https``. It only ever talks to the loopback
interface inside the container, so nothing outside can use this. Standard library only (it runs every 30 s).
Exit status 0 when the portal answers 200, 1 otherwise (with the reason on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect means the check was not accepted as HTTPS: report it, do not follow it


def host_header(allowed_hosts: str) -> str:
    """The first ALLOWED_HOSTS entry usable as a Host header ('.example.org' matches 'example.org')."""
    for entry in (part.strip() for part in allowed_hosts.split(",")):
        if entry and entry != "*":
            return entry.lstrip(".")
    return "localhost"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    request = urllib.request.Request(
        f"http://127.0.0.1:{args.port}/health/",
        headers={"Host": host_header(os.environ.get("ALLOWED_HOSTS", "")), "X-Forwarded-Proto": "https"},
    )
    try:
        with urllib.request.build_opener(_NoRedirect).open(request, timeout=4) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        print(f"health check: {exc}", file=sys.stderr)
        return 1
    if status != 200:
        print(f"health check: /health/ answered {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
