"""API JSON bodies are read by the importers' JSON loader: values PostgreSQL or Python cannot take are a 400
naming the field, never a 500 (deep nesting raised RecursionError, a lone surrogate UnicodeEncodeError); so are a
number that overflows to infinity (1e400) and a key given twice (Python kept the last: accepted with a 200)."""

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


# A body holding a number that overflows to infinity, or a key twice, sent to endpoints that answered 200 to it
# (the December security review's finding 7): (method, URL, role, body, the field and words of the 400).
REPEATED_OR_INFINITE = [
    ("post", "/api/review/next/", "reviewer", '{"qa_type": "true_false", "qa_type": "list"}', "qa_type", "twice"),
    ("post", "/api/review/next/", "reviewer", '{"verdict": "correct", "verdict": "incorrect"}', "verdict", "twice"),
    ("patch", "/api/vetting/config/", "organizer", '{"gold_rate": 0.1, "gold_rate": 0.9}', "gold_rate", "twice"),
    ("patch", "/api/vetting/config/", "organizer", '{"gold_rate": 1e400}', "gold_rate", "1e400 is out of range"),
    ("patch", "/api/vetting/config/", "organizer", '{"second_share": -1e400}', "second_share", "-1e400 is out of"),
    ("patch", "/api/batches/BATCH/", "organizer", '{"priority": 1, "priority": 9}', "priority", "twice"),
    ("patch", "/api/batches/BATCH/", "organizer", '{"paused": true, "priority": 1e400}', "priority", "out of range"),
    ("post", "/api/studies/", "organizer", '{"name": "a", "name": "b", "systems": []}', "name", "twice"),
]


@pytest.mark.parametrize(("method", "url", "role", "body", "field", "words"), REPEATED_OR_INFINITE)
def test_repeated_keys_and_infinite_numbers_are_a_400_and_change_nothing(
    client, make_user, method, url, role, body, field, words
):
    from annotation.models import Assignment, ImportBatch, VettingConfig
    from ranking.models import Study

    batch = ImportBatch.objects.create(name="b", fmt="cliniqlink")
    config_before = VettingConfig.load()
    client.force_login(make_user(role))
    response = getattr(client, method)(url.replace("BATCH", str(batch.pk)), body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert f"request body, field '{field}': " in response.json()["detail"] and words in response.json()["detail"]
    batch.refresh_from_db()
    assert (batch.paused, batch.priority) == (False, 0)
    config = VettingConfig.load()
    assert (config.gold_rate, config.second_share) == (config_before.gold_rate, config_before.second_share)
    assert not Assignment.objects.exists() and not Study.objects.exists()
