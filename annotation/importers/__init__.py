"""Parsers for every accepted input format: they read files and return validated records (no writes; the
length of a value is checked against its model column).

Every problem is raised as :class:`portal.importing.ImportProblem` naming the file, the record index and the
field, before anything is written; the service layer then writes all records in one transaction (all-or-nothing).
"""

from annotation.importers.base import ParsedItem, ParsedPassage

__all__ = ["ParsedItem", "ParsedPassage"]
