"""The analytics pages: reports (``reports``), nugget boards (``nuggets``), span reports (``spans``) and judge
cards (``judges``). Thin: each reads through a selector or service and renders."""
