"""Nugget evaluation of a ranking study: automatic matchers (``matching``), imported judge labels
(``judge_labels``), what the board reads (``selectors``) and the board itself (``board``)."""
