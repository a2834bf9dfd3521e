"""Portal-wide pages: people and institutions, API tokens, job progress, health. (The role-aware home page reads
every app, so it lives at the top of the stack, in ``home``.)"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from celery import current_app
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection, transaction
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views import View

from portal.api_tokens import api_token_create, api_token_revoke
from portal.audit import audit_access, audit_history
from portal.audit_trail import (
    ACCESS_ACTIONS,
    ACTION_WORDS,
    AuditFilter,
    action_words,
    audit_matching,
    audit_origin,
    audit_page,
    audit_rows,
)
from portal.csv_cells import DictWriter
from portal.downloads import attachment_header, download_name
from portal.errors import DomainError
from portal.forms import InstitutionForm, PersonEditForm, PersonForm
from portal.job_kinds import job_kinds
from portal.jobs import job_failure_seen, job_list, job_outputs, job_retry
from portal.mfa import mfa_required, session_passed_mfa
from portal.models import ApiToken, Institution, Job, User
from portal.numbers import whole_number
from portal.permissions import AUTHENTICATED, RoleRequiredMixin
from portal.roles import Role, can_follow_job, can_organize
from portal.serializers import JobSerializer
from portal.services import (
    institution_set_admitted,
    institution_set_password_login,
    person_admit,
    person_invite,
    person_set_active,
    person_update,
)
from portal.sessions import sessions_end_everywhere


class PeopleView(RoleRequiredMixin, View):
    """Organizers admit institutions and people, assign roles, invite (set-password link), deactivate; and switch
    passwords off for an institution whose members sign in through single sign-on."""

    required_roles = (Role.ORGANIZER,)
    _PERSON_ACTIONS = {
        "invite": (
            "Set-password link sent to {email}.",
            lambda user, request: person_invite(user=user, by=request.user, request=request),
        ),
        "deactivate": (
            "{email} deactivated: their sessions and API tokens stop working.",
            lambda user, request: person_set_active(user=user, active=False, by=request.user),
        ),
        "reactivate": (
            "{email} reactivated.",
            lambda user, request: person_set_active(user=user, active=True, by=request.user),
        ),
    }

    def get(self, request):
        return self._render(request, PersonForm(), InstitutionForm())

    def post(self, request):
        action = request.POST.get("person_action", "")
        if action in self._PERSON_ACTIONS:
            user = get_object_or_404(User, pk=whole_number(request.POST.get("person")))
            message, act = self._PERSON_ACTIONS[action]
            try:
                act(user, request)
                messages.success(request, message.format(email=user.email))
            except DomainError as exc:
                messages.error(request, str(exc))
            return redirect("people")
        if request.POST.get("institution_action") in {"withdraw", "readmit"}:
            institution = get_object_or_404(Institution, pk=whole_number(request.POST.get("institution")))
            admitted = request.POST["institution_action"] == "readmit"
            try:
                institution_set_admitted(institution=institution, admitted=admitted, by=request.user)
                state = "admitted again" if admitted else "no longer admitted: its members cannot use the portal"
                messages.success(request, f"{institution.name} {state}.")
            except DomainError as exc:
                messages.error(request, str(exc))
            return redirect("people")
        if request.POST.get("institution_action") in {"passwords_off", "passwords_on"}:
            return self._switch_passwords(request)
        if "add_institution" in request.POST:
            form = InstitutionForm(request.POST)
            if form.is_valid():
                form.save()
                messages.success(request, f"Institution {form.instance.name} admitted.")
                return redirect("people")
            return self._render(request, PersonForm(), form)
        form = PersonForm(request.POST)
        if form.is_valid():
            try:
                # One change: a refused invitation (e.g. a deactivated account) leaves the person as they were.
                with transaction.atomic():
                    user = person_admit(
                        email=form.cleaned_data["email"],
                        name=form.cleaned_data["name"],
                        institution=form.cleaned_data["institution"],
                        roles=form.cleaned_data["roles"],
                        by=request.user,
                    )
                    if form.cleaned_data["invite"]:
                        person_invite(user=user, by=request.user, request=request)
            except DomainError as exc:
                form.add_error(None, str(exc))
                return self._render(request, form, InstitutionForm(), status=400)
            invited = " A set-password link was emailed to them." if form.cleaned_data["invite"] else ""
            messages.success(
                request,
                f"{user.email} saved with roles: {', '.join(form.cleaned_data['roles']) or 'none'}.{invited}",
            )
            return redirect("people")
        return self._render(request, form, InstitutionForm(), status=400)

    def _switch_passwords(self, request):
        institution = get_object_or_404(Institution, pk=whole_number(request.POST.get("institution")))
        password_login = request.POST["institution_action"] == "passwords_on"
        try:
            institution_set_password_login(institution=institution, password_login=password_login, by=request.user)
            state = (
                "its members may sign in with a password again"
                if password_login
                else "passwords are off: its members sign in through single sign-on (their API tokens keep working)"
            )
            messages.success(request, f"{institution.name}: {state}.")
        except DomainError as exc:
            messages.error(request, str(exc))
        return redirect("people")

    def _render(self, request, person_form, institution_form, status=200):
        people = User.objects.select_related("institution").prefetch_related("groups").order_by("email")
        return render(
            request,
            "portal/people.html",
            {
                "people": people,
                "institutions": Institution.objects.all(),
                "person_form": person_form,
                "institution_form": institution_form,
                "invite_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
            },
            status=status,
        )


class PersonEditView(RoleRequiredMixin, View):
    """One person's name, institution, roles, training level and specialty, edited from their row on the people
    page (organizers only: the training level and specialty are shown nowhere else)."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        person = get_object_or_404(User, pk=pk)
        # The page shows the person's history (what they and others changed), with names.
        audit_access(action="identities_viewed", actor=request.user, obj=person, detail="person page", request=request)
        initial = {
            "name": person.get_full_name(),
            "institution": person.institution_id,
            "roles": list(person.groups.values_list("name", flat=True)),
            "training_level": person.training_level,
            "specialty": person.specialty,
        }
        return self._render(request, person, PersonEditForm(initial=initial, person=person))

    def post(self, request, pk):
        person = get_object_or_404(User, pk=pk)
        form = PersonEditForm(request.POST, person=person)
        if form.is_valid():
            try:
                person_update(user=person, by=request.user, **form.cleaned_data)
            except DomainError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"{person.email} saved.")
                return redirect("people")
        return self._render(request, person, form, status=400)

    def _render(self, request, person, form, status=200):

        # Its changes only: the person's sign-ins and views of this page are on the audit trail's page.
        history = audit_history(person).exclude(action__in=ACCESS_ACTIONS).order_by("-at")[:20]
        return render(request, "portal/person_edit.html", {"person": person, "form": form, "history": history},
                      status=status)  # fmt: skip


class ApiTokensView(RoleRequiredMixin, View):
    """A person's own API tokens: list, create (the key shown once, on this response only), revoke."""

    required_roles = AUTHENTICATED

    def get(self, request):
        return self._render(request)

    def post(self, request):
        if "revoke" in request.POST:
            token = get_object_or_404(ApiToken, pk=whole_number(request.POST.get("revoke")), user=request.user)
            api_token_revoke(token=token, by=request.user)
            messages.success(request, f"Token {token.name} revoked: it no longer works.")
            return redirect("api_tokens")
        try:
            token, key = api_token_create(
                user=request.user, name=request.POST.get("name", ""), mfa_verified=session_passed_mfa(request)
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, status=400)
        # Rendered, not redirected: the key must not travel through the session's message storage.
        return self._render(request, new_token=token, new_key=key)

    def _render(self, request, status=200, **extra):
        return render(
            request,
            "portal/api_tokens.html",
            {
                "tokens": request.user.api_tokens.all(),
                "needs_mfa_session": mfa_required(request.user) and not session_passed_mfa(request),
                "token_days": settings.PORTAL_API_TOKEN_DAYS,
                **extra,
            },
            status=status,
        )


class SignOutEverywhereView(RoleRequiredMixin, View):
    """The person's own "Sign out everywhere" (the Security page): ends every session of theirs, this one too."""

    required_roles = AUTHENTICATED

    def post(self, request):
        sessions_end_everywhere(user=request.user)
        logout(request)
        messages.success(
            request,
            "You were signed out on every device, this one included. Your API tokens, authenticator app and "
            "password are unchanged: revoke a token on its page, or change your password, if someone else may have "
            "used them.",
        )
        return redirect("account_login")


def _followed_job(request, job_id) -> Job:
    """The job, if the signed-in person may follow it (see ``can_follow_job``); 404 / 403 otherwise."""
    job = get_object_or_404(Job, pk=job_id)
    if not can_follow_job(request.user, job):
        raise PermissionDenied("This job was started by someone else.")
    return job


class JobView(RoleRequiredMixin, View):
    """A job's progress: an HTML page with a bar (HTMX polls it) or JSON with ?format=json."""

    required_roles = AUTHENTICATED

    def get(self, request, job_id):
        job = _followed_job(request, job_id)
        if request.GET.get("format") == "json":
            return JsonResponse(JobSerializer(job).data)
        if job.status == Job.Status.FAILED and can_organize(request.user):
            job_failure_seen(job=job)  # read here: the home page need not remind of it
        template = "portal/_job_progress.html" if request.htmx else "portal/job.html"
        context = {
            "job": job,
            "outputs": job_outputs(job),
        }
        return render(request, template, context)


class JobListView(RoleRequiredMixin, View):
    """Background jobs (imports, scoring, reports): all of them for organizers, one's own for others."""

    required_roles = AUTHENTICATED

    def get(self, request):
        status = request.GET.get("status", "")
        status = status if status in Job.Status.values else ""
        kind = request.GET.get("kind", "")[:50]
        page = Paginator(job_list(user=request.user, status=status, kind=kind), 50).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        return render(
            request,
            "portal/job_list.html",
            {
                "page": page,
                "status": status,
                "kind": kind,
                "statuses": Job.Status.choices,
                "kinds": job_kinds(),
                "query": query.urlencode(),
            },
        )


class JobRetryView(RoleRequiredMixin, View):
    """POST: run a job again that failed for a reason other than its input (see ``portal.jobs.job_retry``)."""

    required_roles = AUTHENTICATED

    def post(self, request, job_id):
        job = _followed_job(request, job_id)
        try:
            job_retry(job=job, by=request.user)
            messages.success(request, "The job is queued again.")
        except DomainError as exc:
            messages.error(request, str(exc))
        return redirect("job", job.pk)


class AuditTrailView(RoleRequiredMixin, View):
    """The audit trail (sign-ins, refused ones, downloads, names viewed, tokens, role changes), newest first, a page
    at a time; filtered by person, action and days; ``?format=csv``: every entry the filters select."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        chosen = _audit_filter(request.GET)
        if request.GET.get("format") == "csv":
            return _audit_csv(chosen)
        entries, following = audit_page(chosen, after=_audit_cursor_read(request.GET.get("after", "")))
        query = request.GET.copy()
        query.pop("after", None)
        return render(
            request,
            "portal/audit.html",
            {
                "lines": [
                    {"row": row, "at": entry.at, "words": action_words(row["action"]), "origin": audit_origin(entry)}
                    for row, entry in zip(audit_rows(entries), entries, strict=True)
                ],
                "chosen": chosen,
                "actions": ACTION_WORDS,
                "query": query.urlencode(),
                "older": _audit_cursor_text(following) if following else "",
                "paged": "after" in request.GET,
                # A date field's value is ISO 8601 whatever the house format of dates shown.
                "since_iso": chosen.since.isoformat() if chosen.since else "",
                "until_iso": chosen.until.isoformat() if chosen.until else "",
                "retention_days": settings.AUDIT_RETENTION_DAYS,
            },
        )


_AUDIT_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _audit_filter(params) -> AuditFilter:
    """The page's filters from the query; a value that is not one of them (an unknown action, a date that is not
    one) filters nothing."""
    action = params.get("action", "")
    return AuditFilter(
        person=params.get("person", "").strip()[:254] or None,
        action=action if action in ACTION_WORDS else None,
        since=_iso_day(params.get("since", "")),
        until=_iso_day(params.get("until", "")),
    )


def _iso_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def _audit_cursor_text(cursor: tuple[datetime, int]) -> str:
    """The next page's start as "microseconds-id" (exact, and plain in a URL, unlike an ISO time's "+")."""
    at, pk = cursor
    return f"{(at - _AUDIT_EPOCH) // timedelta(microseconds=1)}-{pk}"


def _audit_cursor_read(text: str) -> tuple[datetime, int] | None:
    micros, _, pk = text.partition("-")
    if not (micros.isascii() and micros.isdigit() and pk.isascii() and pk.isdigit()) or len(micros) > 18:
        return None
    return _AUDIT_EPOCH + timedelta(microseconds=int(micros)), int(pk)


class _Echo:
    """A file whose write returns the text: the CSV writer's lines go straight into the streamed response."""

    def write(self, text: str) -> str:
        return text


def _audit_csv(chosen: AuditFilter) -> StreamingHttpResponse:
    """Every selected entry, newest first, streamed a chunk at a time; text cells guarded against formulas."""
    fields = ["at", "actor", "action", "object", "detail", "from"]
    writer = DictWriter(_Echo(), fieldnames=fields, lineterminator="\n")

    def lines():
        yield writer.writeheader()
        batch: list = []
        for entry in audit_matching(chosen):
            batch.append(entry)
            if len(batch) == 1000:
                yield from _audit_csv_lines(writer, batch)
                batch = []
        yield from _audit_csv_lines(writer, batch)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = attachment_header(
        download_name("audit trail", timezone.localdate().isoformat(), "csv")
    )
    return response


def _audit_csv_lines(writer: DictWriter, entries: list) -> list[str]:
    return [
        writer.writerow(row | {"from": audit_origin(entry)})
        for row, entry in zip(audit_rows(entries), entries, strict=True)
    ]


def health(request):
    """Liveness + readiness: the database answers, and the broker when one is configured."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        checks["database"] = f"error: {exc.__class__.__name__}"
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        try:
            with current_app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:  # noqa: BLE001
            checks["broker"] = f"error: {exc.__class__.__name__}"
    else:
        checks["broker"] = "not configured (tasks run in-process)"
    healthy = all(v == "ok" or v.startswith("not configured") for v in checks.values())
    return JsonResponse({"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503)


health.public = True
