"""One way to write dates and times on every page ("24 Nov 2026", "24 Nov 2026, 11:19 UTC").

Django's English defaults ("Nov. 24, 2026, 11:19 a.m.") mixed with hand-written formats in templates gave three
styles; templates now say ``|date`` (a day) or ``|date:"DATETIME_FORMAT"`` (a moment) and these decide. The time
zone is always written: an organizer in another zone must not read UTC times as their own.
"""

DATE_FORMAT = "j M Y"
SHORT_DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i T"
SHORT_DATETIME_FORMAT = "j M Y, H:i T"
TIME_FORMAT = "H:i T"
