"""A study's designed physician sample (``Study.physician_sample``, drawn by
:mod:`analytics.services.physician_sample`) in words: the study page and the report say it the same way."""

from __future__ import annotations

#: How each design drew its questions, in words (``{judge}``: the judge's name).
DESIGN_WORDS = {
    "uniform": "drawn uniformly at random",
    "judge_uncertain": "drawn towards questions where the judge '{judge}' is least certain",
    "systems_differ": "drawn towards questions where the judge '{judge}' scores the systems most differently",
}


def design_sentence(design: dict) -> str:
    """A designed physician sample (``Study.physician_sample``) in words: how many questions, how drawn, and that
    the estimates weight each by 1/its chance."""
    how = DESIGN_WORDS[design["design"]].format(judge=design.get("judge") or "")
    return (
        f"Physicians rank a sample: {design['sampled']:,} of {design['questions']:,} questions, {how}; the "
        "estimates weight each by 1/its chance of being drawn."
    )
