"""The client's address, the one rule for every part of the portal that reads it (login throttling, audit).

Behind the reverse proxy the README requires, every request's REMOTE_ADDR is the proxy's, so throttling on it
locks everyone out at once. ``X-Forwarded-For`` is believed only when the peer itself is one of
``PORTAL_TRUSTED_PROXIES``: the header is then read from the right (each proxy appends the address it saw), skipping
trusted proxies, and the first address that is not one is the client. Anything to its left was written by the
client and could be forged, so it is never used. A peer that is not a trusted proxy is the client, whatever
headers it sends.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings

from portal.env import parse_networks

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[_Network, ...]:
    # The setting was checked when the settings loaded (portal.env.env_networks): a bad entry stops the start.
    return parse_networks(entries)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.5:443"
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def client_ip(request) -> str | None:
    """The client's address as a string (None when even the peer's address is unreadable)."""
    trusted = _networks(tuple(settings.PORTAL_TRUSTED_PROXIES))
    peer = _address(request.META.get("REMOTE_ADDR", ""))
    if peer is None:
        return None

    def is_trusted(address) -> bool:
        return any(address in network for network in trusted)

    if not is_trusted(peer):
        return str(peer)
    client = peer
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        address = _address(hop)
        if address is None:
            # A malformed entry: what lies to its left cannot be trusted; the last good hop answers.
            break
        client = address
        if not is_trusted(address):
            break
    return str(client)
