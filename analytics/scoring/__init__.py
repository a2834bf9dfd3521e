"""Scoring system outputs with the ClinIQLink metric: a run over a release (``runs``) and its per-slice tables
(``slices``)."""
