"""What the analytics pages and API do: asking for a report or a scoring run (``requests``), building a report
(``reports``)."""
