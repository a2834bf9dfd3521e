"""LLM judges against physicians: imported judge scores (``scores``) and a study's judge meta-evaluation
(``study``)."""
