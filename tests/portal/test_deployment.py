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

ROOT = Path(__file__).resolve().parents[2]
PROD_ENV = {
    "PORTAL_PROFILE": "production",
    "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
    "ALLOWED_HOSTS": "portal.example.org",
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
    ],
)
def test_unsafe_or_malformed_settings_refuse_to_start(env, message):
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert message in result.stderr


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

    from django.db import connection

    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    command = json.loads(re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", dockerfile, re.M).group(1))
    assert command[0] == "python"
    params = connection.get_connection_params()
    database_url = (
        f"postgresql://{params.get('user', 'postgres')}@/{connection.settings_dict['NAME']}"
        f"?host={params['host']}&port={params.get('port', 5432)}"
        if str(params.get("host", "")).startswith("/")
        else f"postgresql://{params['user']}:{params.get('password') or ''}@{params['host']}:{params['port']}/"
        f"{connection.settings_dict['NAME']}"
    )
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
