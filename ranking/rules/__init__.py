"""Pure validation rules of a physician's submission: the ranking (``rankings``), span marks (``spans``) and nugget
labels (``nuggets``). No queries here."""
