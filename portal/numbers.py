"""Whole numbers read from people: one bound for every page, form and API field.

PostgreSQL's ``integer`` columns (and every id the portal looks up) hold -2**31 .. 2**31-1; a larger number sent
to a query is a DataError (a 500), and text where an id belongs a ValueError. So a whole number outside that
range is refused as input, like any other invalid value: a form error, an API 400, a 404 for an id.
"""

from __future__ import annotations

from django import forms
from rest_framework import serializers

DB_INT_MIN, DB_INT_MAX = -(2**31), 2**31 - 1


def whole_number(value) -> int | None:
    """A raw query-string / form value as an int within the database's range, or None when it is not one."""
    try:
        number = int(str(value).strip()) if len(str(value)) <= 20 else None
    except ValueError:
        return None
    return number if number is not None and DB_INT_MIN <= number <= DB_INT_MAX else None


class WholeNumberField(forms.IntegerField):
    """``forms.IntegerField`` bounded to the database's range unless narrower bounds are given."""

    def __init__(self, *, min_value=DB_INT_MIN, max_value=DB_INT_MAX, **kwargs):
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)


class WholeNumberSerializerField(serializers.IntegerField):
    """``serializers.IntegerField`` bounded to the database's range unless narrower bounds are given."""

    def __init__(self, *, min_value=DB_INT_MIN, max_value=DB_INT_MAX, **kwargs):
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)
