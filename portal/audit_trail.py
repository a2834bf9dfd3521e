"""Reading the audit trail (the organizers' page, its CSV, ``manage.py audit_log``) and its retention.

One row shape for all three readers, :func:`audit_rows`: ``at``, ``actor`` (e-mail or None), ``action``, ``object``,
``detail``. Pages go by keyset on (at, id), newest first, and never count the table: it grows to millions of entries.

The judgement, dispute, ranking and nugget exports were audited before the trail of access existed
(``judgements_exported``, ``rankings_exported``, …: one entry per export, written by the export itself, the
download's included). The trail lists such an entry as ``export_download`` instead of writing a second entry for the
same event; releases and report files, which had no entry, write ``export_download`` themselves.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from portal.models import AuditEntry, User

EXPORT_DOWNLOAD = "export_download"
# Entries of access, not of a change: an object's own history (a person's page) leaves them out.
ACCESS_ACTIONS = ("login", "login_refused", EXPORT_DOWNLOAD, "identities_viewed")
# Entries that exports write themselves, listed (and filtered) as export_download; see the module's docstring.
EXPORT_ACTIONS = ("judgements_exported", "disputes_exported", "rankings_exported", "nuggets_exported")

ACTION_WORDS = {
    "login": "Signed in",
    "login_refused": "Sign-in refused",
    EXPORT_DOWNLOAD: "Downloaded an export",
    "identities_viewed": "Viewed judgements with names",
    "api_token_created": "Created an API token",
    "api_token_revoked": "Revoked an API token",
    "person_updated": "Changed a person's roles or details",
    "person_admitted": "Admitted a person",
    "person_invited": "Sent a set-password link",
    "person_deactivated": "Deactivated a person",
    "person_reactivated": "Reactivated a person",
    "sessions_ended": "Ended all sessions",
}

# What an entry's object is, in words; other types are shown as stored ("annotation.review 12").
OBJECT_WORDS = {
    "portal.user": "person",
    "portal.apitoken": "API token",
    "ranking.study": "study",
    "annotation.release": "release",
    "annotation.qaitem": "item",
    "analytics.report": "report",
    "annotation.reliability": "reviewer reliability",
    "annotation.judgements": "judgements",
    "annotation.nuggetexport": "nuggets",
    "sign-in": "sign-in as",
}
# The field that names an object of these types, looked up a page at a time.
_NAME_FIELDS = {"portal.user": "email", "ranking.study": "name", "annotation.qaitem": "uid"}

PAGE_SIZE = 50
_CHUNK = 2000


_IDENTIFIER = re.compile(r"[a-z]+(?:_[a-z0-9]+)+")


def action_words(action: str) -> str:
    """The action for people: "Signed in" for ``login``; an action without words of its own, its key spelled out."""
    if action in ACTION_WORDS:
        return ACTION_WORDS[action]
    text = action.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def listed_action(action: str) -> str:
    return EXPORT_DOWNLOAD if action in EXPORT_ACTIONS else action


@dataclass(frozen=True)
class AuditFilter:
    """Who, what and when; a field left None does not filter. ``until`` is inclusive (a whole day)."""

    person: str | None = None  # an e-mail address, any case
    action: str | None = None
    since: dt.date | None = None
    until: dt.date | None = None


def audit_entries(chosen: AuditFilter) -> QuerySet[AuditEntry]:
    """The entries ``chosen`` selects, unordered (an action listed under another, export_download, brings its
    aliases; each action is read on its own index, see :func:`audit_page`)."""
    entries = AuditEntry.objects.all()
    if chosen.person:
        person = User.objects.filter(email__iexact=chosen.person.strip()).values_list("pk", flat=True).first()
        entries = entries.filter(actor_id=person) if person is not None else entries.none()
    if chosen.since:
        entries = entries.filter(at__gte=_day_start(chosen.since))
    if chosen.until:
        entries = entries.filter(at__lt=_day_start(chosen.until + dt.timedelta(days=1)))
    return entries


def audit_page(chosen: AuditFilter, *, after: tuple[dt.datetime, int] | None = None, size: int = PAGE_SIZE):
    """Up to ``size`` entries, newest first, older than the (at, id) ``after`` when given; and the cursor of the
    next page (None on the last). One index range scan per action: no count, no sort of the whole selection."""
    entries = audit_entries(chosen)
    if after is not None:
        at, pk = after
        # at <= t is what the indexes on at can use; the OR breaks ties within one instant by id.
        entries = entries.filter(Q(at__lte=at) & (Q(at__lt=at) | Q(pk__lt=pk)))
    newest_first = ("-at", "-id")
    actions = _stored_actions(chosen.action)
    if len(actions) == 1:
        entries = entries.filter(action=actions[0])
    if len(actions) > 1:
        # One ordered, limited scan per stored action, merged: an IN list would read and sort every match.
        parts = [entries.filter(action=action).order_by(*newest_first)[: size + 1] for action in actions]
        rows = list(parts[0].union(*parts[1:], all=True).order_by(*newest_first)[: size + 1])
    else:
        rows = list(entries.order_by(*newest_first)[: size + 1])
    following = (rows[size - 1].at, rows[size - 1].pk) if len(rows) > size else None
    return rows[:size], following


def audit_since(since: dt.datetime | None) -> Iterator[AuditEntry]:
    """Every entry from ``since`` on (all when None), oldest first, read a chunk at a time by keyset."""
    entries = AuditEntry.objects.all() if since is None else AuditEntry.objects.filter(at__gte=since)
    last: tuple[dt.datetime, int] | None = None
    while True:
        chunk = entries
        if last is not None:
            chunk = chunk.filter(Q(at__gte=last[0]) & (Q(at__gt=last[0]) | Q(pk__gt=last[1])))
        rows = list(chunk.order_by("at", "id")[:_CHUNK])
        yield from rows
        if len(rows) < _CHUNK:
            return
        last = (rows[-1].at, rows[-1].pk)


def audit_matching(chosen: AuditFilter) -> Iterator[AuditEntry]:
    """Every entry ``chosen`` selects, newest first, a page at a time (the CSV download)."""
    cursor = None
    while True:
        rows, cursor = audit_page(chosen, after=cursor, size=_CHUNK)
        yield from rows
        if cursor is None:
            return


def audit_rows(entries: Iterable[AuditEntry]) -> list[dict]:
    """The one row shape of the page, the CSV and the command: ``at`` (ISO 8601, UTC), ``actor`` (e-mail or None),
    ``action`` (as listed), ``object`` (in words), ``detail``."""
    entries = list(entries)
    emails = dict(User.objects.filter(pk__in={e.actor_id for e in entries if e.actor_id}).values_list("pk", "email"))
    names = _object_names(entries)
    return [
        {
            "at": entry.at.astimezone(dt.UTC).isoformat(),
            "actor": emails.get(entry.actor_id) if entry.actor_id else None,
            "action": listed_action(entry.action),
            "object": _object_words(entry, names),
            "detail": _detail(entry),
        }
        for entry in entries
    ]


def audit_origin(entry: AuditEntry) -> str:
    """The client address an access entry was recorded from ("" for a change entry or the command line)."""
    return str(entry.after.get("ip") or "") if isinstance(entry.after, dict) else ""


def audit_prune(*, older_than_days: int) -> int:
    """Delete the entries older than ``older_than_days`` days; the number deleted. The transaction-local settings
    are what the database's guard (migration 0011) asks of the only deletion it allows."""
    if older_than_days < 1:
        raise ValueError("the audit retention is at least one day")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('portal.audit_purge', 'on', true), set_config('portal.audit_retention_days', %s, true)",
            [str(older_than_days)],
        )
        cursor.execute("DELETE FROM portal_auditentry WHERE at < now() - make_interval(days => %s)", [older_than_days])
        return cursor.rowcount


def _stored_actions(action: str | None) -> tuple[str, ...]:
    if not action:
        return ()
    return (EXPORT_DOWNLOAD, *EXPORT_ACTIONS) if action == EXPORT_DOWNLOAD else (action,)


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def _object_names(entries: list[AuditEntry]) -> dict[tuple[str, str], str]:
    """The names of the entries' objects of the types in ``_NAME_FIELDS``: one query per type."""
    wanted: dict[str, set[str]] = {}
    for entry in entries:
        if entry.object_type in _NAME_FIELDS:
            wanted.setdefault(entry.object_type, set()).add(entry.object_id)
    names = {}
    for object_type, ids in wanted.items():
        model = apps.get_model(object_type)
        keys = [int(i) for i in ids if i.isascii() and i.isdigit()]
        for pk, name in model._default_manager.filter(pk__in=keys).values_list("pk", _NAME_FIELDS[object_type]):
            names[(object_type, str(pk))] = str(name)
    return names


def _carried_name(entry: AuditEntry) -> str:
    """The name an entry carries for an object that may be gone or has no name field: a release's label, a report's
    kind, a token's name (in ``before`` when it was revoked)."""
    for side in (entry.after, entry.before):
        if isinstance(side, dict) and side.get("name"):
            return str(side["name"])
    return ""


def _object_words(entry: AuditEntry, names: dict[tuple[str, str], str]) -> str:
    # A person's entry may carry their full name as what changed: the e-mail address names them here.
    name = names.get((entry.object_type, entry.object_id)) or _carried_name(entry) or entry.object_id
    return f"{OBJECT_WORDS.get(entry.object_type, entry.object_type)} {name}".strip()


def _detail(entry: AuditEntry) -> str:
    """The note when the entry has one (access entries do); an export's format and whether it named people; else
    what changed, from the entry's ``after``."""
    if entry.note:
        return entry.note
    after = entry.after if isinstance(entry.after, dict) else {}
    if entry.action in EXPORT_ACTIONS:
        # The nugget export has one format and names nobody: its entry records neither.
        words = [str(after.get("format") or "jsonl")]
        if "identities" in after:
            words.append("with identities" if after["identities"] else "pseudonymised")
        if entry.actor_id is None:
            words.append("command line")
        return ", ".join(words)
    changed = after or (entry.before if isinstance(entry.before, dict) else {})  # a revocation keeps its "before"
    return "; ".join(f"{_words(key)}: {_value_words(value)}" for key, value in changed.items() if key != "ip")


def _words(name: object) -> str:
    """A stored key or code in words: ``final_verdict`` → "final verdict"; anything else as it is (file names keep
    their underscores)."""
    text = str(name)
    return text.replace("_", " ") if _IDENTIFIER.fullmatch(text) else text


def _value_words(value: object) -> str:
    """What changed, as a person reads it: lists and mappings (an import's counts, a release's rule) spelled out."""
    if isinstance(value, dict):
        return ", ".join(f"{_words(key)} {_value_words(inner)}" for key, inner in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_value_words(inner) for inner in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "—" if value in (None, "") else _words(value)
