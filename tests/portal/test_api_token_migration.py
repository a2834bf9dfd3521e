"""Existing DRF tokens keep working after the upgrade: stored hashed with an expiry; DRF's clear-text table is gone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("portal", "0003_job_recovery")]
AFTER = [("portal", "0004_api_tokens")]


def test_drf_tokens_become_hashed_expiring_tokens_and_the_clear_text_table_is_dropped(make_user, settings):
    from rest_framework.test import APIClient

    from portal.models import ApiToken

    settings.PORTAL_API_TOKEN_DAYS = 30
    reviewer = make_user("reviewer")
    key = "a" * 20 + "0123456789abcdef0123"
    created = timezone.now() - timedelta(days=400)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    with connection.cursor() as cursor:
        # DRF's authtoken table as its migrations left it.
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL,"
            " user_id bigint NOT NULL UNIQUE)"
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)", [key, created, reviewer.pk])
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('authtoken_token')")
        assert cursor.fetchone()[0] is None
    token = ApiToken.objects.get(user=reviewer)
    assert token.key_hash == ApiToken.hash_of(key) and token.prefix == key[:8] and token.created_at == created
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # the code below reads today's tables (the users' too)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/review/progress/").status_code == 200


def test_without_drf_tokens_the_migration_does_nothing_more():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from portal.models import ApiToken

    assert not ApiToken.objects.exists()
