"""People, institutions, background jobs and the audit history shared by every app."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.contrib.auth.password_validation import validate_password
from django.db import models
from django.utils import timezone

from portal.jsonfields import FiniteJSONEncoder


class Institution(models.Model):
    """An accredited institution that contributors belong to; admitted by an organizer."""

    name = models.CharField(max_length=200, unique=True)
    country = models.CharField(max_length=100, blank=True)
    admitted = models.BooleanField(default=True, help_text="Members of a non-admitted institution cannot sign in.")
    password_login = models.BooleanField(
        default=True,
        help_text="Members may sign in with a password. Off: only through single sign-on (their API tokens still work).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class UserManager(BaseUserManager):
    use_in_migrations = True

    def _create(self, email, password, **extra):
        if not email:
            raise ValueError("An email address is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        if password is not None:
            # Django's createsuperuser --noinput (DJANGO_SUPERUSER_PASSWORD) skips the validators; here they apply
            # to every account created with a password (its ValidationError becomes the command's error).
            validate_password(password, user)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra):
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create(email, password, **extra)

    def create_superuser(self, email, password=None, **extra):
        extra.update(is_staff=True, is_superuser=True)
        return self._create(email, password, **extra)


class TrainingLevel(models.TextChoices):
    """How far a person is in their medical training (optional; organizers read it beside their judgements)."""

    STUDENT_1 = "student_1", "Medical student, year 1"
    STUDENT_2 = "student_2", "Medical student, year 2"
    STUDENT_3 = "student_3", "Medical student, year 3"
    STUDENT_4 = "student_4", "Medical student, year 4"
    STUDENT_5 = "student_5", "Medical student, year 5"
    STUDENT_6 = "student_6", "Medical student, year 6"
    RESIDENT = "resident", "Resident"
    ATTENDING = "attending", "Attending"
    OTHER = "other", "Other"


SPECIALTY_MAX_LENGTH = 100


class User(AbstractUser):
    """A person: signs in with email; roles are groups (see portal.roles)."""

    username = None
    email = models.EmailField("email address", unique=True)
    institution = models.ForeignKey(
        Institution, null=True, blank=True, on_delete=models.PROTECT, related_name="members"
    )
    # Raised by "Sign out everywhere" (portal.sessions.sessions_end_everywhere): every session signed in before it
    # stops working, on every device (see get_session_auth_hash).
    session_epoch = models.PositiveIntegerField(default=0, editable=False)
    # Organizers' knowledge of a person, private like an e-mail address: shown on the people pages only, never to
    # other reviewers nor in what they download.
    training_level = models.CharField(max_length=20, choices=TrainingLevel.choices, blank=True)
    specialty = models.CharField(
        max_length=SPECIALTY_MAX_LENGTH, blank=True, help_text="e.g. cardiology; free text, short."
    )

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []
    objects = UserManager()

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.get_full_name() or self.email

    # Django stores this hash in every session at sign-in and ends a session whose hash no longer matches (as after a
    # password change): mixing in the session epoch ends them all when it is raised. At epoch 0 the hash is Django's
    # own, so the sessions open before the epoch existed stay valid.
    def get_session_auth_hash(self) -> str:
        return self._hash_with_session_epoch(super().get_session_auth_hash())

    def get_session_auth_fallback_hash(self):
        for fallback in super().get_session_auth_fallback_hash():
            yield self._hash_with_session_epoch(fallback)

    def _hash_with_session_epoch(self, session_hash: str) -> str:
        if not self.session_epoch:
            return session_hash
        # session_hash is already an HMAC keyed with the secret key: a plain digest of it keeps it unforgeable.
        return hashlib.sha256(f"{session_hash}:{self.session_epoch}".encode()).hexdigest()

    @property
    def pseudonym(self) -> str:
        """Stable pseudonym used in exports (no identity unless an organizer asks for it)."""
        digest = hashlib.sha256(f"{settings.SECRET_KEY[:16]}:{self.pk}".encode()).hexdigest()
        return f"annotator-{digest[:8]}"


class Job(models.Model):
    """A long-running piece of work (import, scoring, report, export) with progress that pages poll."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=50, db_index=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    params = models.JSONField(default=dict, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True, encoder=FiniteJSONEncoder)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The Celery task that runs the job (its first step), so that a job whose message the broker lost can be
    # queued again (portal.jobs.jobs_recover); empty for jobs run in the calling process.
    task_name = models.CharField(max_length=200, blank=True)
    # Last sign of life: queued, started, a progress write, a part of a split job ending, queued again.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Failed for a reason other than its input (its worker died, an internal error): may be run again as it is.
    retryable = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the uploaded files this job read were deleted (PORTAL_UPLOAD_RETENTION_DAYS after it ended).
    uploads_deleted_at = models.DateTimeField(null=True, blank=True)
    # When an organizer took note of this failed job (opened it from the home page or dismissed it there): the home
    # page's "What to do next" stops listing it.
    dismissed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.status} ({self.progress_done}/{self.progress_total})"

    @property
    def percent(self) -> int:
        if self.status == self.Status.SUCCEEDED:
            return 100
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_done / self.progress_total))

    @property
    def finished(self) -> bool:
        return self.status in {self.Status.SUCCEEDED, self.Status.FAILED}

    @property
    def duration_text(self) -> str:
        """How long the last attempt took ("" until it has finished)."""
        if not (self.started_at and self.finished_at):
            return ""
        seconds = max(0.0, (self.finished_at - self.started_at).total_seconds())
        if seconds < 90:
            return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
        return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"

    @property
    def quiet_minutes(self) -> int:
        """Whole minutes since the last sign of life of an unfinished job (0 once finished)."""
        if self.finished:
            return 0
        last_seen = self.heartbeat_at or self.created_at
        return int((timezone.now() - last_seen).total_seconds() // 60) if last_seen else 0

    def upload_folders(self) -> list[Path]:
        """The upload folders (PORTAL_UPLOADS_DIR/<id>/) of the files this job reads: its ``path`` / ``paths``
        parameters as the import services write them. Files elsewhere (a command-line import's) are not listed."""
        root = Path(settings.PORTAL_UPLOADS_DIR).resolve()
        params = self.params if isinstance(self.params, dict) else {}
        paths = list(params.get("paths") or []) + ([params["path"]] if params.get("path") else [])
        folders = {Path(p).resolve().parent for p in paths if isinstance(p, str)}
        return sorted(folder for folder in folders if folder.parent == root)

    @property
    def uploads_delete_after(self):
        """When this finished job's uploaded files will be deleted (None: not finished, none, or already gone)."""
        if not self.finished or self.uploads_deleted_at or not self.finished_at or not self.upload_folders():
            return None
        return self.finished_at + timedelta(days=settings.PORTAL_UPLOAD_RETENTION_DAYS)

    @property
    def requeue_minutes(self) -> int:
        """Minutes without a sign of life after which the job is queued again (portal.jobs.jobs_recover)."""
        return settings.JOB_STALE_SECONDS // 60


class AuditEntry(models.Model):
    """Append-only history of every change to items, reviews, disputes, rankings and releases."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    # No index of its own: the (actor, at, id) index of the audit page leads with it.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, db_index=False)
    action = models.CharField(max_length=80)
    # Read only by object (portal.audit.audit_history: the Meta index); a review writes several entries, so no
    # index of their own (nor Django's varchar_pattern_ops twins of them).
    object_type = models.CharField(max_length=80)
    object_id = models.CharField(max_length=80)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["object_type", "object_id", "at"]),
            # The audit page's filters (portal.audit_trail): one person's or one action's entries, newest first,
            # a page at a time by (at, id) over millions of entries.
            models.Index(fields=["actor", "at", "id"], name="audit_actor_at"),
            models.Index(fields=["action", "at", "id"], name="audit_action_at"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.object_type}:{self.object_id}"


class ApiToken(models.Model):
    """A person's API key (``Authorization: Token <key>``); see portal.api_tokens for the rules.

    Only the key's SHA-256 is stored: the key is shown once, when created, and a copy of the database (a backup)
    holds nothing that signs in. A plain hash suffices because keys are 256-bit random strings, not passwords.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="The key's first characters, to recognise it in the list.")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    # Created from a session that gave a second factor: only such a token acts for someone who must use MFA
    # (a reviewer's token does not become an organizer's key when its owner is promoted).
    created_with_mfa = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @staticmethod
    def hash_of(key: str) -> str:
        """What is stored of a key, and what a presented key is looked up by."""
        return hashlib.sha256(key.encode()).hexdigest()
