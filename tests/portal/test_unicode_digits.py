"""Numbers in URLs, query strings and API bodies written with characters Python calls digits but ``int`` refuses
("¹", "²") or too large for the database: refused or ignored like any other bad value, never a 500 (the API fuzzer
found the first one in the study form's system list)."""

from __future__ import annotations

import pytest

from annotation.services.releases import release_get
from portal.errors import DomainError, NotFound
from ranking.services.studies import study_create

pytestmark = pytest.mark.django_db

ODD_NUMBERS = ["¹", "²³", "99999999999999999999999"]


@pytest.mark.parametrize("entry", ODD_NUMBERS)
def test_a_study_with_an_odd_system_number_is_refused_naming_it(entry):
    with pytest.raises(DomainError, match="unknown system"):
        study_create(name="s", systems=[entry])


@pytest.mark.parametrize("version", ODD_NUMBERS)
def test_a_release_version_that_is_no_number_is_not_found(version):
    with pytest.raises(NotFound, match="versions are numbers"):
        release_get(f"bench@{version}")


@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_pages_and_api_filters_ignore_odd_numbers(organizer_client, value):
    assert organizer_client.get("/api/items/", {"batch": value}).status_code == 200
    assert organizer_client.get("/analytics/task1/", {"release": value}).status_code == 200
    assert organizer_client.get(f"/releases/bench@{value}/").status_code == 404
