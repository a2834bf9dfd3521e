"""Validated nugget lists written straight into the database, for the ranking tests (nugget authoring is not
what they test)."""

from __future__ import annotations

from annotation.models import Nugget, NuggetSet

DEFAULT_NUGGETS = (
    ("n1", "Metformin is the first-line drug for type 2 diabetes.", "vital"),
    ("n2", "It lowers hepatic glucose production.", "okay"),
    ("n3", "Metformin causes severe hypoglycaemia on its own.", "avoid"),
)


def validated_nuggets(item, nuggets=DEFAULT_NUGGETS, *, status: str = NuggetSet.Status.VALIDATED) -> NuggetSet:
    """A nugget version of ``item`` (validated unless ``status`` says otherwise) with ``nuggets`` as
    (key, text, importance) triples, in that order."""
    version = NuggetSet.objects.filter(item=item).count() + 1
    nugget_set = NuggetSet.objects.create(item=item, version=version, status=status, origin=NuggetSet.Origin.AUTHORED)
    Nugget.objects.bulk_create(
        [
            Nugget(nugget_set=nugget_set, position=i, key=key, text=text, importance=importance)
            for i, (key, text, importance) in enumerate(nuggets, start=1)
        ]
    )
    return nugget_set
