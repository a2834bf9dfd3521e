"""Typed readers of environment variables: the one home for reading each kind of setting (settings and
gunicorn.conf.py only).

Every variable is read and checked when the settings load, so a bad value stops the start (``manage.py``,
gunicorn's workers, Celery) with ``ImproperlyConfigured`` naming the variable, the value and what was expected,
instead of starting a server that fails later, request after request (``PORTAL_TRUSTED_PROXIES=true`` once failed
every sign-in with a 500). An unset variable takes the default; so does an empty one, except for plain text
(``env_str`` without choices: an empty ``SECRET_KEY`` is empty).
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import zoneinfo
from collections.abc import Collection
from datetime import timedelta
from email.utils import parseaddr
from importlib.util import find_spec

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# A duration is a whole number in the unit its variable's name ends with: REVIEW_LEASE_SECONDS=1800,
# PORTAL_SESSION_IDLE_MINUTES=480, PORTAL_API_TOKEN_DAYS=30.
_UNITS = {
    "SECONDS": timedelta(seconds=1),
    "MINUTES": timedelta(minutes=1),
    "HOURS": timedelta(hours=1),
    "DAYS": timedelta(days=1),
}
# allauth's rate syntax (ACCOUNT_RATE_LIMITS): "10/m/ip,5/5m/key": amount / duration (s, m, h, d, with an optional
# count) / what it counts per.
_RATE = re.compile(r"(?P<amount>[1-9][0-9]*)/(?P<duration>[0-9]*[smhd])/(?P<per>[a-z]+)")


def _refused(name: str, raw: str | None, expected: str) -> ImproperlyConfigured:
    """The refusal, naming the variable, its value (None: not shown, as a URL may hold a password) and what was
    expected."""
    return ImproperlyConfigured(f"{name}={raw!r} is not {expected}" if raw is not None else f"{name} is not {expected}")


def _raw(name: str) -> str | None:
    """The variable's text, None when it is unset or blank (the default applies)."""
    raw = os.environ.get(name)
    return None if raw is None or raw.strip() == "" else raw


def env_str(name: str, default: str = "", *, choices: Collection[str] | None = None) -> str:
    raw = os.environ.get(name) if choices is None else _raw(name)
    if raw is None:
        return default
    if choices is not None and raw not in choices:
        raise _refused(name, raw, "one of " + ", ".join(repr(choice) for choice in choices))
    return raw


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise _refused(name, raw, "a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise _refused(name, raw, "a whole number" + _bounds(minimum, maximum))
    return value


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if (
        not math.isfinite(value)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        raise _refused(name, raw, "a number" + _bounds(minimum, maximum))
    return value


def env_duration(name: str, default: timedelta, *, minimum: timedelta = timedelta(0)) -> timedelta:
    """A whole number of the unit the variable's name ends with (``_SECONDS``, ``_MINUTES``, ``_HOURS``,
    ``_DAYS``); at least ``minimum``."""
    unit_name = name.rsplit("_", 1)[-1]
    unit = _UNITS[unit_name]  # a KeyError here is the programmer's: a duration's name says its unit
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = unit * int(raw)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise _refused(name, raw, f"a whole number of {unit_name.lower()}" + _bounds(minimum // unit, None))
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def parse_networks(entries: Collection[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Addresses or networks (``10.0.0.5``, ``10.0.0.0/8``, ``2001:db8::/32``); ValueError names a bad one.
    Shared by the setting's reader below and ``portal.clientip``, which matches addresses against them."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(str(entry).strip(), strict=False))
        except ValueError:
            raise ValueError(f"{str(entry)!r} is not an IP address or network") from None
    return tuple(networks)


def env_networks(name: str) -> list[str]:
    """A comma-separated list of IP addresses or networks."""
    entries = env_list(name, [])
    try:
        parse_networks(entries)
    except ValueError as exc:
        expected = f"a comma-separated list of IP addresses or networks (e.g. 10.0.0.5,10.1.0.0/16): {exc}"
        raise _refused(name, os.environ.get(name, ""), expected) from None
    return entries


def env_origins(name: str) -> list[str]:
    """A comma-separated list of origins, each with its scheme (``https://portal.example.org``)."""
    origins = env_list(name, [])
    for origin in origins:
        if not re.fullmatch(r"https?://[^/\s]+", origin):
            expected = f"a comma-separated list of origins with their scheme (https://portal.example.org): {origin!r}"
            raise _refused(name, os.environ.get(name, ""), expected)
    return origins


def env_url(name: str, *, schemes: Collection[str] | None = None) -> str:
    """A URL (``scheme://…``) whose scheme is one of ``schemes`` (None: any); empty when unset."""
    raw = os.environ.get(name, "").strip()
    scheme, separator, _ = raw.partition("://")
    if raw and not (
        separator and re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme) and (schemes is None or scheme in schemes)
    ):
        expected = " or ".join(f"{scheme}://" for scheme in schemes) if schemes else "scheme://"
        raise _refused(name, None, f"a URL starting with {expected}")
    return raw


def env_rates(name: str, default: str, *, per: Collection[str]) -> str:
    """A rate-limit list in allauth's syntax (``10/m/ip,5/5m/key``), counting only ``per`` these."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    for part in raw.split(","):
        match = _RATE.fullmatch(part.strip())
        if not match or match["per"] not in per:
            kinds = " or ".join(per)
            expected = (
                "a comma-separated list of rates such as 10/m/ip,5/5m/key (a count / a duration in s, m, h or d / "
                f"{kinds}): {part.strip()!r}"
            )
            raise _refused(name, raw, expected)
    return raw


def env_time_zone(name: str, default: str) -> str:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        zoneinfo.ZoneInfo(raw)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _refused(name, raw, "a time zone name such as UTC or Europe/Berlin") from None
    return raw


def env_dotted_path(name: str, default: str) -> str:
    """A class named by its dotted path whose module can be found (``django.core.mail.backends.smtp.EmailBackend``);
    the module itself is imported when first used."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    module, _, attribute = raw.strip().rpartition(".")
    try:
        found = bool(module and attribute) and find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise _refused(name, raw, "the dotted path of a class in an installed module")
    return raw.strip()


def env_email(name: str, default: str) -> str:
    """An e-mail address, optionally with a display name (``Portal <portal@example.org>``)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    address = parseaddr(raw)[1]
    local, _, domain = address.rpartition("@")
    if not local or not domain:
        raise _refused(name, raw, "an e-mail address (portal@example.org, or Portal <portal@example.org>)")
    return raw


def _bounds(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    if maximum is not None:
        return f" of at most {maximum}"
    return ""
