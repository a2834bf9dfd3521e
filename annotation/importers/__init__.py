"""Parsers for every accepted input format. Pure Python: they read files and return validated records.

Every problem is raised as :class:`ImportProblem` naming the file, the record index and the field, before
anything is written; the service layer then writes all records in one transaction (all-or-nothing).
"""

from annotation.importers.base import ImportProblem, ParsedItem, ParsedPassage

__all__ = ["ImportProblem", "ParsedItem", "ParsedPassage"]
