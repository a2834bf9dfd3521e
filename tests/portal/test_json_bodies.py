"""API JSON bodies are read by the importers' JSON loader: values PostgreSQL or Python cannot take are a 400
naming the field, never a 500 (deep nesting raised RecursionError, a lone surrogate UnicodeEncodeError)."""

from __future__ import annotations

import pytest

from portal.importing import ImportProblem, Limits, parse_json

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('{"name": "a\\u0000b"}', "field 'name': contains a NUL character"),
        ('{"name": "a\\ud800b"}', "field 'name': contains a lone surrogate"),
        ('{"name": "s", "systems": [1, NaN]}', "field 'systems (entry 2)': NaN is not a number"),
        ('{"name": "s", "items_per_task": 1' + "0" * 5000 + "}", "field 'items_per_task': an integer of 5,001 digits"),
        ('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}", "nesting deeper than 16 levels"),
        ('{"name": "' + "x" * 100_001 + '"}', "field 'name': is 100,001 characters long; the limit is 100,000"),
    ],
)
def test_hostile_json_bodies_are_a_400_naming_the_field(organizer_client, body, words):
    response = organizer_client.post("/api/studies/", body, content_type="application/json")
    assert response.status_code == 400
    assert words in response.json()["detail"]


def test_a_plain_body_still_reaches_the_view(organizer_client):
    response = organizer_client.post("/api/studies/", '{"name": ""}', content_type="application/json")
    assert response.status_code == 400 and "name" in response.json()  # the serializer's answer, not the parser's


@pytest.mark.parametrize("text", ['{"name": "a\ud800b"}', '{"name": 1, "a\udfffb": 2}'])
def test_raw_lone_surrogates_are_found_as_well_as_escaped_ones(text):
    # A body decoded with a text codec such as unicode_escape reaches the parser with the surrogate already raw.
    with pytest.raises(ImportProblem, match="lone surrogate"):
        parse_json(text, Limits(), "request body", records=False)
