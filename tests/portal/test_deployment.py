"""Production profile and deployment files: check --deploy is clean, unsafe settings refuse to start,
the compose file describes the whole stack and references things that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import test_database_url

ROOT = Path(__file__).resolve().parents[2]
PROD_ENV = {
    "PORTAL_PROFILE": "production",
    "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
    "ALLOWED_HOSTS": "portal.example.org",
    # The shared cache of login throttling (never reached by `check`; the health check reads no cache).
    "REDIS_URL": "redis://127.0.0.1:6390/1",
}


def _manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE is set for the browser tests in this process; a deployment never has it.
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def test_check_deploy_is_clean_in_the_production_profile():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PROD_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    "env,message",
    [
        ({"PORTAL_PROFILE": "production", "ALLOWED_HOSTS": "x.org"}, "SECRET_KEY must be set"),
        ({**PROD_ENV, "DEBUG": "1"}, "DEBUG must be off"),
        ({**PROD_ENV, "ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must be set"),
        ({"DEBUG": "maybe"}, "is not a boolean"),
        ({"DATABASE_URL": "sqlite:///x.db"}, "SQLite is not supported"),
        ({**PROD_ENV, "REDIS_URL": ""}, "REDIS_URL must be set in the production profile"),
    ],
)
def test_unsafe_or_malformed_settings_refuse_to_start(env, message):
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert message in result.stderr


# One malformed value of each kind of setting (portal.env): each stops the start naming the variable and what it
# expected, instead of a server that starts and then fails (PORTAL_TRUSTED_PROXIES=true failed every sign-in).
MALFORMED_SETTINGS = [
    ("PORTAL_TRUSTED_PROXIES", "true", "IP addresses or networks"),
    ("PORTAL_TRUSTED_PROXIES", "10.0.0.5,10.0.0.0/33", "'10.0.0.0/33' is not an IP address or network"),
    ("CSRF_TRUSTED_ORIGINS", "portal.example.org", "origins with their scheme"),
    ("LOGIN_FAILED_RATE", "10/minute", "rates such as 10/m/ip,5/5m/key"),
    ("LOGIN_FAILED_RATE", "5/5m/user", "rates such as"),  # per person: login attempts are anonymous
    ("PORTAL_SESSION_IDLE_MINUTES", "8h", "a whole number of minutes of at least 1"),
    ("PORTAL_SESSION_IDLE_MINUTES", "0", "a whole number of minutes of at least 1"),
    ("REVIEW_LEASE_SECONDS", "-5", "a whole number of seconds"),
    ("PORTAL_API_TOKEN_DAYS", "thirty", "a whole number of days"),
    ("DB_CONN_MAX_AGE", "-1", "a whole number of at least 0"),
    ("PORTAL_UPLOAD_MAX_BYTES", "1e6", "a whole number"),
    ("REVIEW_SECOND_SHARE", "1.5", "a number from 0.0 to 1.0"),
    ("NUGGET_SUPPORT_THRESHOLD", "nan", "a number"),
    ("METRIC_STOPWORDS_VERSION", "200", "one of '198', '179'"),
    ("ACCOUNT_EMAIL_VERIFICATION", "always", "one of 'mandatory', 'optional', 'none'"),
    ("PORTAL_PROFILE", "prod", "one of 'local', 'production'"),
    ("LOG_LEVEL", "loud", "one of 'DEBUG'"),
    ("TIME_ZONE", "Mars/Olympus_Mons", "a time zone name"),
    ("REDIS_URL", "localhost:6379", "a URL starting with redis://"),
    ("CELERY_BROKER_URL", "redis-host", "a URL starting with scheme://"),
    ("DATABASE_URL", "postgres://u:secret@host:port/db", "DATABASE_URL is not a PostgreSQL URL"),
    ("EMAIL_BACKEND", "django.core.mail.backends.carrier_pigeon.EmailBackend", "the dotted path of a class"),
    ("DEFAULT_FROM_EMAIL", "portal", "an e-mail address"),
    ("PORTAL_ANONYMOUS_BODY_MAX_BYTES", "1MB", "a whole number"),
]


@pytest.mark.parametrize("name,value,expected", MALFORMED_SETTINGS)
def test_a_malformed_setting_stops_the_start_naming_the_variable(name, value, expected):
    result = _manage("check", env={name: value})
    assert result.returncode != 0, result.stdout
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured: " + name), last_line
    assert expected in last_line
    assert "secret" not in last_line  # a URL's password is never echoed


def test_well_formed_settings_start():
    """Every variable the checks above refuse, set to a good value that is not its default: the start goes on."""
    good = {
        "PORTAL_TRUSTED_PROXIES": "10.0.0.5, 10.1.0.0/16, 2001:db8::/32",
        "CSRF_TRUSTED_ORIGINS": "https://portal.example.org,http://localhost:8000",
        "LOGIN_FAILED_RATE": "20/m/ip,5/15m/key",
        "PORTAL_SESSION_IDLE_MINUTES": "60",
        "REVIEW_LEASE_SECONDS": "900",
        "PORTAL_API_TOKEN_DAYS": "7",
        "DB_CONN_MAX_AGE": "0",
        "DB_PREPARE_THRESHOLD": "off",
        "PORTAL_UPLOAD_MAX_BYTES": "1000000",
        "REVIEW_SECOND_SHARE": "0.3",
        "NUGGET_SUPPORT_THRESHOLD": "0.8",
        "METRIC_STOPWORDS_VERSION": "179",
        "ACCOUNT_EMAIL_VERIFICATION": "optional",
        "LOG_LEVEL": "WARNING",
        "TIME_ZONE": "Europe/Berlin",
        "REDIS_URL": "redis://127.0.0.1:6390/1",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "DEFAULT_FROM_EMAIL": "Portal <portal@example.org>",
        "PORTAL_ANONYMOUS_BODY_MAX_BYTES": "65536",
    }
    result = _manage("check", env=good)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "no issues" in result.stdout


def test_compose_file_describes_the_production_stack():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "migrate"} <= set(services)
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "gunicorn" in services["web"]["command"] and "config.wsgi" in services["web"]["command"]
    assert services["worker"]["command"][:3] == ["celery", "-A", "config"]
    env = compose["x-portal-env"]
    assert env["PORTAL_PROFILE"] == "production"
    assert env["DATABASE_URL"].startswith("postgres://") and env["CELERY_BROKER_URL"].startswith("redis://")
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    build = services["migrate"]["build"]
    assert (ROOT / "docker" / build["context"] / build["dockerfile"]).exists()


def test_gunicorn_settings_are_the_benchmarked_ones(monkeypatch):
    """gunicorn.conf.py (read from the working directory by every way the portal is served) sets the threaded
    workers the latency benchmarks measure; the environment can resize them."""
    import runpy

    monkeypatch.delenv("WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_THREADS", raising=False)
    monkeypatch.delenv("WEB_KEEPALIVE", raising=False)
    conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert (conf["worker_class"], conf["workers"], conf["threads"], conf["keepalive"]) == ("gthread", 4, 4, 75)
    monkeypatch.setenv("WEB_THREADS", "8")
    monkeypatch.setenv("WEB_KEEPALIVE", "0")  # a connection per request: see gunicorn.conf.py
    resized = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert (resized["threads"], resized["keepalive"]) == (8, 0)
    from gunicorn.config import Config

    config = Config()
    for name, value in conf.items():
        if name in config.settings:
            config.set(name, value)  # gunicorn accepts every name and value in the file
    assert config.worker_class_str == "gthread"
    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("WEB_WORKERS", "two")  # the settings' readers: a bad value stops the start, named
    with pytest.raises(ImproperlyConfigured, match="WEB_WORKERS='two' is not a whole number"):
        runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def test_dockerfile_copies_and_runs_files_that_exist():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert "torch==2.13.0" in dockerfile and "requirements.txt" in dockerfile
    for script in re.findall(r"python (scripts/\S+\.py)", dockerfile):
        assert (ROOT / script).exists(), script
    assert "HEALTHCHECK" in dockerfile and "scripts/healthcheck.py" in dockerfile  # run for real below


@pytest.mark.django_db
def test_dockerfile_health_check_passes_against_gunicorn_in_the_production_profile(tmp_path):
    """The HEALTHCHECK command of the Dockerfile, run as Docker runs it (exec form, the image's environment),
    against a real gunicorn under the production defaults: HTTPS redirect on, only the public host allowed."""
    import json
    import socket
    import time

    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    command = json.loads(re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", dockerfile, re.M).group(1))
    assert command[0] == "python"
    database_url = test_database_url()
    # The socket is bound here and handed to gunicorn (fd://): a port found free and bound later by the server
    # could be taken in between by a test running beside this one.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE", "CELERY_BROKER_URL"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | PROD_ENV | {"DATABASE_URL": database_url}
    log = (tmp_path / "gunicorn.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"fd://{listener.fileno()}", "--workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        pass_fds=[listener.fileno()],
    )
    listener.close()  # gunicorn holds its own copy
    try:
        deadline = time.monotonic() + 60
        while True:
            check = subprocess.run(
                [sys.executable, *command[1:], "--port", str(port)], cwd=ROOT, env=env, capture_output=True, text=True
            )
            if check.returncode == 0 or time.monotonic() > deadline or server.poll() is not None:
                break
            time.sleep(0.5)  # gunicorn still starting (refused, or slow first answer on a busy machine)
        assert check.returncode == 0, check.stderr + (tmp_path / "gunicorn.log").read_text()[-3000:]
    finally:
        server.terminate()
        server.wait(10)


def test_health_check_sends_the_first_allowed_host():
    import runpy

    host_header = runpy.run_path(str(ROOT / "scripts" / "healthcheck.py"))["host_header"]
    assert host_header("portal.example.org,www.example.org") == "portal.example.org"
    assert host_header(" *, .example.org") == "example.org"
    assert host_header("") == "localhost"


def _make_run_server_command(port: int) -> list[str]:
    """The server command of `make run`, as make would run it (dry run), on 127.0.0.1:``port``."""
    dry_run = subprocess.run(
        ["make", "-n", "run", f"PORT={port}", "PYTHON=" + sys.executable], cwd=ROOT, capture_output=True, text=True
    )
    line = next(line for line in dry_run.stdout.splitlines() if "manage.py runserver" in line)
    return [sys.executable, *line.split("/python ", 1)[1].split(), "--noreload"]


@pytest.mark.django_db
@pytest.mark.parametrize("debug", ["0", "1"])
def test_make_run_answers_a_traversal_under_static_with_404_and_serves_the_static_files(tmp_path, debug):
    """`make run` (and `DEBUG=1 make run`) serves static files through WhiteNoise: runserver's own static handler
    answered `/static/..%2f..%2fconfig/settings.py` with a 500 (SuspiciousFileOperation)."""
    import socket
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = _make_run_server_command(port)
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE", "CELERY_BROKER_URL"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | {
        "DEBUG": debug,
        "DATABASE_URL": test_database_url(),
    }
    log = (tmp_path / "runserver.log").open("wb")
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def status(path: str) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                css = status("/static/portal/portal.css")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError((tmp_path / "runserver.log").read_text()[-3000:]) from None
                time.sleep(0.3)
        assert css == 200
        assert status("/static/vendor/htmx.min.js") == 200
        for path in ("/static/..%2f..%2fconfig/settings.py", "/static/../config/settings.py", "/static/%2e%2e/x"):
            assert status(path) == 404, path
    finally:
        server.terminate()
        server.wait(10)
