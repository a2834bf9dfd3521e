# The one package __init__ that imports names: Django loads an app's models from ``annotation.models``, and callers
# import the model classes from here as in any Django app. Every other package of the app keeps an empty __init__.
from annotation.models.adjudication import Adjudication
from annotation.models.blinding import ItemExposure
from annotation.models.disputes import Dispute, DisputeComment, FeedbackNote
from annotation.models.guidelines import GuidelineAcknowledgement, GuidelineVersion
from annotation.models.items import ImportBatch, QAItem, SourcePassage
from annotation.models.nuggets import Nugget, NuggetSet, NuggetTask
from annotation.models.releases import Release, ReleaseItem
from annotation.models.reliability import ReliabilityFit, ReviewerReliability
from annotation.models.review import Assignment, Review, ReviewDraft, ReviewRevision
from annotation.models.vetting import GoldAnswer, GoldItem, VettingConfig

__all__ = [
    "SourcePassage",
    "ImportBatch",
    "QAItem",
    "VettingConfig",
    "Assignment",
    "Review",
    "ReviewRevision",
    "ReviewDraft",
    "GoldItem",
    "GoldAnswer",
    "Dispute",
    "DisputeComment",
    "FeedbackNote",
    "Adjudication",
    "Release",
    "ReleaseItem",
    "GuidelineVersion",
    "GuidelineAcknowledgement",
    "NuggetSet",
    "Nugget",
    "NuggetTask",
    "ItemExposure",
    "ReliabilityFit",
    "ReviewerReliability",
]
