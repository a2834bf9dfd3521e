"""Span (hallucination) evaluation of a ranking study: detector files (``detectors``) and the span report
(``report``)."""
