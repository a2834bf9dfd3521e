"""The audit trail of access (issue #44, part 4): append-only in the database, pruned only past its retention; every
sign-in and refused one, every export download, every page that shows judgements with names; the organizers' page
(filters, keyset pages, spreadsheet-safe CSV) and ``manage.py audit_log --json``."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from allauth.account.signals import user_logged_in
from django.contrib.auth.signals import user_login_failed
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.models import QAItem, Release
from annotation.services.imports import items_import
from portal.audit import audit_access
from portal.audit_trail import AuditFilter, audit_page, audit_prune, audit_rows
from portal.models import AuditEntry, User
from tests.ranking.conftest import make_study, sample_items, systems_with_outputs  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-123"
ADDRESS = "203.0.113.7"


def _listed(entry: AuditEntry) -> dict:
    (row,) = audit_rows([entry])
    return row


def _old_entry(days: int, action: str = "login") -> int:
    """An entry dated ``days`` ago (the ORM stamps ``at`` itself), inserted as a row of long ago would be."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO portal_auditentry (at, action, object_type, object_id, note) "
            "VALUES (now() - make_interval(days => %s), %s, 'sign-in', 'x', '') RETURNING id",
            [days, action],
        )
        return cursor.fetchone()[0]


def _refused(sql: str, params=()) -> None:
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


# --- the database keeps the trail --------------------------------------------------------------------------------


def test_the_database_refuses_update_delete_and_truncate_of_entries():
    entry = audit_access(action="login", actor=None, obj=("sign-in", "a@b.org"), detail="password")
    pk = AuditEntry.objects.get(note="password", object_id="a@b.org").pk
    assert entry.action == "login"
    _refused("UPDATE portal_auditentry SET note = 'changed' WHERE id = %s", [pk])
    _refused("DELETE FROM portal_auditentry WHERE id = %s", [pk])
    with connection.cursor() as cursor:  # the inserts' deferred foreign-key checks would block any TRUNCATE
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    _refused("TRUNCATE portal_auditentry")
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEntry.objects.filter(pk=pk).delete()
    assert AuditEntry.objects.get(pk=pk).note == "password"


def test_an_old_entry_is_refused_too_without_the_purge_flag():
    old = _old_entry(500)
    _refused("DELETE FROM portal_auditentry WHERE id = %s", [old])


def test_the_purge_flag_does_not_open_young_entries():
    young = _old_entry(10)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL portal.audit_purge = 'on'")
        cursor.execute("SET LOCAL portal.audit_retention_days = '5'")  # asks for less than the entry's age...
        cursor.execute("SET LOCAL portal.audit_retention_days = '30'")  # ...the last setting is what counts
        cursor.execute("DELETE FROM portal_auditentry WHERE id = %s", [young])
    assert AuditEntry.objects.filter(pk=young).exists()


def test_prune_deletes_only_entries_older_than_the_retention(settings):
    settings.AUDIT_RETENTION_DAYS = 400
    old, older = _old_entry(401), _old_entry(900)
    kept = [_old_entry(399), _old_entry(1)]
    out = io.StringIO()
    call_command("audit_prune", stdout=out)
    assert "Deleted 2 audit entries older than 400 days" in out.getvalue()
    assert not AuditEntry.objects.filter(pk__in=[old, older]).exists()
    assert AuditEntry.objects.filter(pk__in=kept).count() == 2
    assert audit_prune(older_than_days=300) == 1  # the entry 399 days old
    assert list(AuditEntry.objects.filter(pk__in=kept).values_list("pk", flat=True)) == [kept[1]]


def test_the_daily_task_prunes_with_the_configured_retention(settings):
    from portal.tasks import audit_prune_task

    assert settings.CELERY_BEAT_SCHEDULE["prune-audit-trail"]["task"] == "portal.tasks.audit_prune_task"
    settings.AUDIT_RETENTION_DAYS = 30
    gone, kept = _old_entry(31), _old_entry(29)
    assert audit_prune_task() == {"deleted": 1}
    assert list(AuditEntry.objects.filter(pk__in=[gone, kept]).values_list("pk", flat=True)) == [kept]


def test_prune_refuses_a_retention_under_a_day():
    with pytest.raises(CommandError, match="at least 1"):
        call_command("audit_prune", "--days", "0")


# --- sign-ins ------------------------------------------------------------------------------------------------------


def test_a_password_sign_in_is_recorded_with_how_and_from_where(client, make_user):
    person = make_user("reviewer")
    response = client.post(reverse("account_login"), {"login": person.email, "password": PASSWORD}, REMOTE_ADDR=ADDRESS)
    assert response.status_code == 302
    entry = AuditEntry.objects.get(action="login")
    assert (entry.actor_id, entry.object_type, entry.object_id) == (person.pk, "portal.user", str(person.pk))
    assert entry.note == "password" and entry.after == {"ip": ADDRESS}
    assert _listed(entry) | {"at": None} == {
        "at": None,
        "actor": person.email,
        "action": "login",
        "object": f"person {person.email}",
        "detail": "password",
    }


def test_a_sign_in_through_a_provider_is_recorded_as_sso(make_user):
    person = make_user("reviewer")
    request = RequestFactory().get("/", REMOTE_ADDR=ADDRESS)
    sociallogin = SimpleNamespace(account=SimpleNamespace(provider="openid_connect"))
    user_logged_in.send(sender=User, request=request, response=None, user=person, sociallogin=sociallogin)
    entry = AuditEntry.objects.get(action="login")
    assert entry.note == "sso" and entry.after == {"provider": "openid_connect", "ip": ADDRESS}


def test_a_refused_sign_in_names_the_address_tried_never_the_password(client, make_user):
    person = make_user("reviewer")
    secret = "Wrong-Secret-42"
    response = client.post(reverse("account_login"), {"login": person.email, "password": secret}, REMOTE_ADDR=ADDRESS)
    assert response.status_code == 200  # the form again, with its error
    entry = AuditEntry.objects.get(action="login_refused")
    assert entry.actor_id is None and entry.object_id == person.email
    assert entry.after == {"email": person.email, "ip": ADDRESS}
    assert secret not in json.dumps([entry.before, entry.after, entry.note, entry.object_id])
    assert _listed(entry)["object"] == f"sign-in as {person.email}" and _listed(entry)["actor"] is None


def test_a_refused_sign_in_with_a_nul_in_the_address_is_recorded_without_it():
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=ADDRESS)
    user_login_failed.send(sender=__name__, credentials={"email": "a\x00@b.org", "password": "****"}, request=request)
    entry = AuditEntry.objects.get(action="login_refused")
    assert entry.object_id == "a@b.org" and entry.after == {"email": "a@b.org", "ip": ADDRESS}


# --- downloads -----------------------------------------------------------------------------------------------------


@pytest.fixture
def vetted():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    keep = list(QAItem.objects.order_by("id").values_list("pk", flat=True)[:6])
    QAItem.objects.filter(pk__in=keep).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )


def _downloads() -> list[dict]:
    entries = AuditEntry.objects.filter(
        action__in=["export_download", "judgements_exported", "disputes_exported", "rankings_exported",
                    "nuggets_exported"]
    ).order_by("at", "id")  # fmt: skip
    return audit_rows(entries)


def test_a_release_download_is_recorded_with_its_label_and_format(vetted, organizer_client, organizer):
    form = {"min_relevance": 5, "final_verdict": "correct", "exclude_open_issues": "on", "benchmark": "cliniqlink"}
    assert organizer_client.post("/releases/", form | {"name": "audit rel"}).status_code == 302
    release = Release.objects.get(name="audit rel")
    assert organizer_client.get(f"/releases/{release.label}/download/csv/").status_code == 200
    (row,) = _downloads()
    assert (row["actor"], row["action"], row["object"], row["detail"]) == (
        organizer.email, "export_download", f"release {release.label}", "csv"
    )  # fmt: skip
    assert AuditEntry.objects.get(action="export_download").after["ip"] == "127.0.0.1"


def test_a_judgement_export_download_is_one_entry_listed_as_export_download(vetted, organizer_client, organizer):
    url = reverse("judgement_export", args=["judgements", "csv"])
    assert organizer_client.get(url + "?identities=1").status_code == 200
    assert organizer_client.get(reverse("judgement_export", args=["disputes", "parquet"])).status_code == 200
    assert _downloads() == [
        {"at": _downloads()[0]["at"], "actor": organizer.email, "action": "export_download",
         "object": "judgements all", "detail": "csv, with identities"},
        {"at": _downloads()[1]["at"], "actor": organizer.email, "action": "export_download",
         "object": "judgements all", "detail": "parquet, pseudonymised"},
    ]  # fmt: skip


# A nugget study's formats (nugget-labels, nugget-csv) go through the same audited export as these two.
@pytest.mark.parametrize("fmt,kind", [("csv", {}), ("spans-csv", {"ask_spans": True, "ask_ranking": False})])
def test_a_study_export_download_names_the_study_and_format(make_study, organizer_client, organizer, fmt, kind):  # noqa: F811
    study = make_study(name="Audit study", **kind)
    response = organizer_client.get(f"/organize/studies/{study.pk}/export/{fmt}/")
    assert response.status_code == 200
    b"".join(response.streaming_content) if response.streaming else response.content
    (row,) = _downloads()
    assert (row["actor"], row["action"], row["object"], row["detail"]) == (
        organizer.email, "export_download", "study Audit study", f"{fmt}, pseudonymised"
    )  # fmt: skip


def test_a_nugget_export_download_is_listed_with_its_format(organizer_client, organizer):
    response = organizer_client.get(reverse("nugget_export") + "?status=all")
    b"".join(response.streaming_content)
    (row,) = _downloads()
    assert (row["actor"], row["action"], row["object"], row["detail"]) == (
        organizer.email, "export_download", "nuggets all", "jsonl"
    )  # fmt: skip


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_report_download_is_recorded_with_the_report_and_format(organizer_client, organizer, fmt):
    from analytics.models import Report

    report = Report.objects.create(kind="reviewer_quality", result={})
    assert organizer_client.get(f"/analytics/reports/{report.pk}/download.{fmt}").status_code == 200
    (row,) = _downloads()
    assert (row["actor"], row["action"], row["object"], row["detail"]) == (
        organizer.email, "export_download", f"report {report.pk} (Reviewer quality)", fmt
    )  # fmt: skip


# --- pages that show judgements with names ---------------------------------------------------------------------------


def _viewed() -> list[tuple[str | None, str, str]]:
    return [
        (r["actor"], r["object"], r["detail"])
        for r in audit_rows(AuditEntry.objects.filter(action="identities_viewed"))
    ]


def test_pages_showing_judgements_with_names_are_logged(vetted, organizer_client, organizer, make_user, client):
    item = QAItem.objects.order_by("id").last()
    assert organizer_client.get(reverse("item_detail", args=[item.uid])).status_code == 200
    assert organizer_client.get(reverse("reliability")).status_code == 200
    person = make_user("reviewer")
    assert organizer_client.get(reverse("person_edit", args=[person.pk])).status_code == 200
    adjudicator = make_user("adjudicator")
    waiting = QAItem.objects.order_by("id").first()
    QAItem.objects.filter(pk=waiting.pk).update(status="in_adjudication")
    client.force_login(adjudicator)
    assert client.get(reverse("adjudication_item", args=[waiting.uid])).status_code == 200
    page = organizer_client.get(reverse("person_edit", args=[person.pk])).content.decode()
    assert "Identities viewed" not in page and "Viewed judgements" not in page  # the person's history: changes
    assert _viewed()[:4] == [
        (organizer.email, f"item {item.uid}", "item page"),
        (organizer.email, "reviewer reliability", "reliability page"),
        (organizer.email, f"person {person.email}", "person page"),
        (adjudicator.email, f"item {waiting.uid}", "adjudication page"),
    ]


# --- the organizers' page -------------------------------------------------------------------------------------------


def test_only_organizers_read_the_trail(client, make_user):
    assert client.get("/organize/audit/").status_code == 302  # anonymous: to the sign-in page
    for role in ("reviewer", "adjudicator", "ranker"):
        client.force_login(make_user(role))
        assert client.get("/organize/audit/").status_code == 403
        assert client.get("/organize/audit/?format=csv").status_code == 403


def test_the_page_filters_by_person_action_and_days(organizer_client, organizer, make_user):
    someone = make_user("reviewer", email="someone@test.portal")
    audit_access(action="login", actor=someone, obj=someone, detail="password")
    audit_access(action="export_download", actor=organizer, obj=("annotation.release", "1"), detail="zip-FORMAT")
    audit_access(action="login_refused", actor=None, obj=("sign-in", "who@x.org"), detail="password")
    _old_entry(30, action="login")

    def shown(**query) -> str:
        return organizer_client.get("/organize/audit/", query).content.decode()

    by_person = shown(person="SOMEONE@test.portal")
    assert "someone@test.portal" in by_person and "zip-FORMAT" not in by_person and "who@x.org" not in by_person
    by_action = shown(action="export_download")
    assert "zip-FORMAT" in by_action and "who@x.org" not in by_action and "Downloaded an export" in by_action
    assert "Sign-in refused" in shown(action="login_refused") and "zip-FORMAT" not in shown(action="login_refused")
    today = timezone.localdate()
    last_month = shown(action="login", until=(today - dt.timedelta(days=20)).isoformat())
    assert "sign-in as x" in last_month and "someone@test.portal" not in last_month
    recent = shown(action="login", since=(today - dt.timedelta(days=1)).isoformat())
    assert "sign-in as x" not in recent and "someone@test.portal" in recent
    assert "No entries match." in shown(person="nobody@test.portal")
    assert ">login_refused<" not in shown() and "<td>Sign-in refused</td>" in shown()  # actions in words
    assert "<time datetime=" in shown()


def test_pages_go_newest_first_by_keyset_without_gaps_or_repeats(organizer_client):
    with connection.cursor() as cursor:  # 120 entries at one instant: only the id orders them
        cursor.execute(
            "INSERT INTO portal_auditentry (at, action, object_type, object_id, note) "
            "SELECT now(), 'login', 'sign-in', 'n' || g, 'password' FROM generate_series(1, 120) g"
        )
    expected = list(
        AuditEntry.objects.filter(object_type="sign-in").order_by("-at", "-id").values_list("pk", flat=True)
    )
    seen, cursor_at, pages = [], None, 0
    while True:
        rows, cursor_at = audit_page(AuditFilter(action="login"), after=cursor_at, size=50)
        seen += [row.pk for row in rows]
        pages += 1
        if cursor_at is None:
            break
    assert seen == expected and pages == 3
    first = organizer_client.get("/organize/audit/?action=login").content.decode()
    older = first.split("after=")[1].split('"')[0]
    second = organizer_client.get(f"/organize/audit/?action=login&after={older}").content.decode()
    assert "sign-in as n120<" in first and "sign-in as n70<" not in first
    assert "sign-in as n70<" in second and "sign-in as n71<" not in second and "sign-in as n21<" in second
    assert organizer_client.get("/organize/audit/?after=garbage-x").status_code == 200


def test_the_export_download_filter_merges_the_exports_own_entries(organizer):
    audit_access(action="export_download", actor=organizer, obj=("annotation.release", "1"), detail="csv")
    from portal.audit import audit_export

    audit_export(actor=organizer, obj=("annotation.judgements", "all"), action="judgements_exported", fmt="csv",
                 identities=False)  # fmt: skip
    audit_access(action="login", actor=organizer, obj=organizer, detail="password")
    rows, _ = audit_page(AuditFilter(action="export_download"), size=10)
    assert [row.action for row in rows] == ["judgements_exported", "export_download"]


def test_the_csv_download_is_spreadsheet_safe_and_holds_every_match(organizer_client, organizer):
    audit_access(action="login_refused", actor=None, obj=("sign-in", "=cmd|' /C calc'!A0"), detail="=cmd|x")
    audit_access(action="login", actor=organizer, obj=organizer, detail="password", extra={"ip": "192.0.2.1"})
    response = organizer_client.get("/organize/audit/?format=csv&action=login_refused")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["action"], r["object"], r["detail"], r["actor"]) for r in rows] == [
        ("login_refused", "sign-in as =cmd|' /C calc'!A0", "'=cmd|x", "")
    ]
    everything = organizer_client.get("/organize/audit/?format=csv")
    lines = list(csv.DictReader(io.StringIO(b"".join(everything.streaming_content).decode())))
    assert {"login", "login_refused"} <= {r["action"] for r in lines}
    assert next(r for r in lines if r["action"] == "login")["from"] == "192.0.2.1"


def test_tokens_and_role_changes_are_listed_with_their_names(organizer, make_user):
    from portal.api_tokens import api_token_create, api_token_revoke
    from portal.services import person_update

    person = make_user("reviewer", email="roles@test.portal")
    since = timezone.now()
    token, _ = api_token_create(user=person, name="laptop", mfa_verified=False)
    api_token_revoke(token=token, by=person)
    person_update(user=person, name="Ada Roles", institution=None, roles=["reviewer", "adjudicator"], by=organizer)
    rows = audit_rows(AuditEntry.objects.filter(at__gte=since).order_by("at", "id"))
    assert [(r["actor"], r["action"], r["object"]) for r in rows] == [
        ("roles@test.portal", "api_token_created", "API token laptop"),
        ("roles@test.portal", "api_token_revoked", "API token laptop"),
        (organizer.email, "person_updated", "person roles@test.portal"),
    ]
    assert rows[0]["detail"] == rows[1]["detail"] == f"name: laptop; prefix: {token.prefix}"
    assert "roles: adjudicator, reviewer" in rows[2]["detail"] and "name: Ada Roles" in rows[2]["detail"]


def test_a_deactivated_person_with_the_right_password_is_a_refused_sign_in(client, make_user, organizer):
    from portal.services import person_set_active

    person = make_user("reviewer")
    person_set_active(user=person, active=False, by=organizer)
    client.post(reverse("account_login"), {"login": person.email, "password": PASSWORD}, REMOTE_ADDR=ADDRESS)
    assert not AuditEntry.objects.filter(action="login").exists()
    assert AuditEntry.objects.get(action="login_refused").object_id == person.email


# --- the command --------------------------------------------------------------------------------------------------


def test_the_command_prints_only_the_json_list(make_user, organizer):
    person = make_user("reviewer", email="json@test.portal")
    since = timezone.now()
    audit_access(action="login", actor=person, obj=person, detail="password", extra={"ip": ADDRESS})
    audit_access(action="login_refused", actor=None, obj=("sign-in", "stranger@x.org"), detail="password")
    audit_access(action="export_download", actor=organizer, obj=("annotation.release", "9"), detail="cliniqlink",
                 extra={"name": "bench@2"})  # fmt: skip
    entries = list(AuditEntry.objects.filter(at__gte=since).order_by("at", "id"))
    stamps = [entry.at.astimezone(dt.UTC).isoformat() for entry in entries]
    out = io.StringIO()
    call_command("audit_log", "--since", since.isoformat(), "--json", stdout=out)
    assert json.loads(out.getvalue()) == [
        {"at": stamps[0], "actor": "json@test.portal", "action": "login", "object": "person json@test.portal",
         "detail": "password"},
        {"at": stamps[1], "actor": None, "action": "login_refused", "object": "sign-in as stranger@x.org",
         "detail": "password"},
        {"at": stamps[2], "actor": organizer.email, "action": "export_download", "object": "release bench@2",
         "detail": "cliniqlink"},
    ]  # fmt: skip


def test_the_command_without_json_prints_a_table_and_refuses_a_bad_date(make_user):
    audit_access(action="login_refused", actor=None, obj=("sign-in", "tab@x.org"), detail="pass\tword")
    out = io.StringIO()
    call_command("audit_log", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split("\t") == ["at", "actor", "action", "object", "detail"]
    assert lines[-1].split("\t")[1:] == ["—", "login_refused", "sign-in as tab@x.org", "pass word"]
    with pytest.raises(CommandError, match="not an ISO 8601 date or time"):
        call_command("audit_log", "--since", "yesterday", "--json")


@pytest.mark.django_db
def test_a_change_entry_reads_in_words_not_as_stored_values():
    """A change entry's ``after`` (an import's counts per judge, a release's rule) is spelled out for people, as the
    demo crawl found it was not: no braces, no None, no snake_case keys."""
    from portal.audit import audit_record
    from portal.audit_trail import audit_rows

    entry = audit_record(
        actor=None,
        obj=("annotation.release", "1"),
        action="release_frozen",
        after={"rule": {"qa_types": [], "statuses": ["verified"], "benchmark": None, "final_verdict": "correct"},
               "scores": {"judge-a": 45}, "file": "true_false.json", "dry_run": False},
    )  # fmt: skip
    detail = audit_rows([AuditEntry.objects.get(pk=entry.pk)])[0]["detail"]
    parts = detail.split("; ")  # the database keeps a JSON object's keys in an order of its own
    assert {"file: true_false.json", "scores: judge-a 45", "dry run: no"} <= set(parts) and len(parts) == 4
    rule = next(part for part in parts if part.startswith("rule: "))
    assert set(rule.removeprefix("rule: ").split(", ")) == {
        "qa types none", "statuses verified", "benchmark —", "final verdict correct"
    }  # fmt: skip
    assert "{" not in detail and "None" not in detail and "final_verdict" not in detail
