"""What the ranking layer announces to the layers above it (analytics), which it may not import."""

from django.dispatch import Signal

#: Sent once the transaction that closed a study has committed, with ``study`` (the study) and ``user`` (who closed
#: it, or None). Analytics computes the study's stored boards again (``analytics.receivers``).
study_closed = Signal()
