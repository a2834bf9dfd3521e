"""Files in, report out: the pure layer that joins the metric (``metrics``) and the statistics (``stats``).

Each module reads the files a command or an upload gives (CSV of ratings, rankings and scores; JSONL of nuggets,
labels, spans and judge scores), validates them naming file, line and field, runs the statistics and returns a
JSON-ready report. No Django here: the management commands and the web pages in ``analytics`` call these functions,
and so can a notebook.
"""
