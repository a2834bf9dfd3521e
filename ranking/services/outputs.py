"""Importing system outputs, and the reference answer as a pseudo-system.

One service, :func:`outputs_import`, behind the CLI (``import_outputs``), the ranking study set-up and Task-1
scoring. Accepted input:

- ClinIQLink harness output: a folder holding ``true_false.json`` … ``multi_hop_inverse.json`` or any of those
  files; each is ``{"inputs": [...], "responses": [...], "prompts": [...]}`` aligned by position (docs/metric.md §2.3).
  ``inputs[i]`` is the dataset item plus ``response`` / ``prompt``; it is matched to a :class:`QAItem` by the
  content uid the item importer gives it (the dataset fields only), then by (type, question, paragraph_id).
- JSONL: one ``{"item_uid", "system", "response"}`` object per line (``prompt`` optional).
- PromptCBLUE predictions (the official ``test_predictions.json``, JSON Lines whatever its suffix): one
  ``{"sample_id", "target"}`` object per line, other fields ignored. ``sample_id`` names the item the PromptCBLUE
  importer made (uid ``pcb-<sample_id>``); ``target`` is kept exactly as written, since the official parser reads
  every character of it.

A ``.json`` file that is not a harness file name and holds JSON Lines is read as JSONL.

All-or-nothing: everything is parsed and matched before the first write. Idempotent: the same response again
changes nothing; a changed response is updated and the change audited.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

from django.db import connection, transaction

from annotation.models import QAItem
from annotation.qa_types import HARNESS_OUTPUT_FILES
from metrics.normalise import to_text
from portal.audit import audit_record
from portal.importing import (
    ImportProblem,
    Limits,
    content_uid,
    identifier,
    json_type,
    load_json,
    require_fits,
    require_str,
    shown,
)
from portal.jobs import Progress, job_start
from portal.json_stream import iter_jsonl
from portal.models import Job, User
from portal.uploads import upload_limits
from ranking.models import System, SystemOutput

_OUTPUTS_LOCK = 734_212  # pg_advisory_xact_lock key: one outputs import at a time
_CHUNK = 2000
_NOT_DATASET_FIELDS = ("response", "prompt")
_SNIFF_BYTES = 8 << 20  # the most of a .json file read to tell JSON Lines from one JSON document
_T = TypeVar("_T")


@dataclass
class ParsedOutput:
    file: str
    record: int
    response_raw: object
    prompt: str = ""
    uid: str = ""
    qa_type: str = ""
    question: str = ""
    paragraph_id: str = ""
    system: str = ""
    sample_id: str = ""
    item_id: int | None = None

    @property
    def text(self) -> str:
        # A PromptCBLUE target goes to the official parser, which reads every character, leading and trailing
        # newlines included: flattening (which strips) would change what the model is scored on.
        if self.sample_id and isinstance(self.response_raw, str):
            return self.response_raw
        return to_text(self.response_raw)


@dataclass
class OutputsImportResult:
    system: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    files: list[str] = field(default_factory=list)
    by_type: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "system": self.system,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "files": self.files,
            "by_type": self.by_type,
        }


# --- reading -------------------------------------------------------------------------------------------------


def _expand(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [path / name for name in HARNESS_OUTPUT_FILES if (path / name).exists()]
            found += sorted(path.glob("*.jsonl"))
            if not found:
                raise ImportProblem(str(path), f"folder holds none of {', '.join(HARNESS_OUTPUT_FILES)} or *.jsonl")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise ImportProblem(str(path), "no such file or folder")
    return files


def _parse_harness(path: Path, limits: Limits, display: str) -> list[ParsedOutput]:
    data = load_json(path, limits, display)
    if not isinstance(data, dict):
        raise ImportProblem(display, f"expected a JSON object with inputs and responses, found {type(data).__name__}")
    for name in ("inputs", "responses"):
        if not isinstance(data.get(name), list):
            raise ImportProblem(display, "missing or not a list", field=name)
    inputs, responses = data["inputs"], data["responses"]
    prompts = data.get("prompts")
    if len(inputs) != len(responses):
        raise ImportProblem(
            display, f"{len(inputs)} inputs but {len(responses)} responses: the lists must align", field="responses"
        )
    if prompts is not None and (not isinstance(prompts, list) or len(prompts) != len(inputs)):
        raise ImportProblem(display, f"must be a list of {len(inputs)} prompts, one per input", field="prompts")
    if len(inputs) > limits.max_records:
        raise ImportProblem(display, f"{len(inputs):,} records; the limit is {limits.max_records:,}")
    file_type = HARNESS_OUTPUT_FILES.get(path.name)
    parsed = []
    for number, record in enumerate(inputs, start=1):
        if not isinstance(record, dict):
            raise ImportProblem(display, f"must be a JSON object, not {type(record).__name__}", record=number)
        dataset = {k: v for k, v in record.items() if k not in _NOT_DATASET_FIELDS}
        id_key = next((key for key in ("uid", "id") if dataset.get(key) not in (None, "")), None)
        # The fields an input is matched by are text, as in the dataset files: another type is refused, not
        # turned into Python's spelling of it ("True", "5"), which would match nothing or the wrong item.
        source = _optional(dataset, "source", dict, "an object", display, number) or {}
        paragraph_id = _optional(source, "paragraph_id", str, "a string", display, number, field="source.paragraph_id")
        question = _optional(dataset, "question", str, "a string", display, number)
        record_type = _optional(dataset, "type", str, "a string", display, number)
        qa_type = file_type.value if file_type else record_type
        if not qa_type:
            raise ImportProblem(
                display, "missing (and the file name does not say the type)", record=number, field="type"
            )
        prompt = prompts[number - 1] if prompts is not None else record.get("prompt")
        parsed.append(
            ParsedOutput(
                file=display,
                record=number,
                response_raw=_response(responses[number - 1], display, number, field="responses"),
                prompt=_prompt(prompt, display, number, field="prompts" if prompts is not None else "prompt"),
                uid=identifier(dataset[id_key], display, number, field=id_key)
                if id_key
                else content_uid("cl", dataset),
                qa_type=qa_type,
                question=question or "",
                paragraph_id=paragraph_id or "",
            )
        )
    return parsed


def _parse_jsonl(path: Path, limits: Limits, display: str) -> list[ParsedOutput]:
    parsed = []
    for index, record in iter_jsonl(path, limits, display):
        if "item_uid" not in record:
            if "sample_id" not in record:
                raise ImportProblem(
                    display,
                    "missing, and so is sample_id: a line names its item by item_uid (or, in PromptCBLUE "
                    "predictions, by sample_id)",
                    record=index,
                    field="item_uid",
                )
            parsed.append(_promptcblue_prediction(record, display, index))
            continue
        uid = identifier(record.get("item_uid"), display, index, field="item_uid")
        if "response" not in record:
            raise ImportProblem(display, "missing", record=index, field="response")
        system = record.get("system", "")
        if not isinstance(system, str):
            raise ImportProblem(display, "must be a string", record=index, field="system")
        parsed.append(
            ParsedOutput(
                file=display,
                record=index,
                response_raw=_response(record["response"], display, index, field="response"),
                uid=uid,
                system=system.strip(),
                prompt=_prompt(record.get("prompt"), display, index, field="prompt"),
            )
        )
    return parsed


def _promptcblue_prediction(record: dict, display: str, index: int) -> ParsedOutput:
    """One line of the official PromptCBLUE predictions: the item by ``sample_id``, by the importer's rule
    (``annotation.importers.promptcblue.parse_record``), and ``target`` as written (empty allowed)."""
    sample_id = identifier(record.get("sample_id"), display, index, field="sample_id")
    target = require_str(record, "target", display, index, allow_empty=True)
    return ParsedOutput(file=display, record=index, response_raw=target, uid=f"pcb-{sample_id}", sample_id=sample_id)


def _is_json_lines(path: Path) -> bool:
    """Whether a ``.json`` file holds JSON Lines (the official PromptCBLUE ``test_predictions.json`` does): its first
    non-blank line is a whole JSON object and another line follows. Only the start of the file is read; a first line
    longer than that is taken as one JSON document, left to the harness reader."""
    with path.open("rb") as file:
        first = _next_non_blank_line(file)
        if first is None or not first.endswith(b"\n") or _next_non_blank_line(file) is None:
            return False  # empty, or one document (a harness file is written on one line)
    try:
        return isinstance(json.loads(first.decode("utf-8-sig")), dict)
    except (ValueError, RecursionError):  # not UTF-8 or not JSON: the reader that gets the file names the problem
        return False


def _next_non_blank_line(file: BinaryIO) -> bytes | None:
    """The next line holding more than whitespace (at most ``_SNIFF_BYTES`` of it), or None at the end of the file."""
    while line := file.readline(_SNIFF_BYTES):
        if line.strip():
            return line
    return None


def _optional(
    record: dict, key: str, kind: type[_T], kind_name: str, display: str, number: int, *, field: str = ""
) -> _T | None:
    """``record[key]`` when it is of ``kind``; None when it is missing or null; anything else is refused."""
    value = record.get(key)
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise ImportProblem(display, f"must be {kind_name}, not {json_type(value)}", record=number, field=field or key)


def _response(value: object, display: str, record: int, *, field: str) -> str | dict | list:
    """``value`` if it holds a response's text: a string, an object with the text in ``generated_text`` or
    ``text`` (what generation pipelines write), or a list of those. Anything else would be stored as "" or as
    Python's spelling of it ("None", "True"), a response the model never gave."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and any(isinstance(value.get(key), str) for key in ("generated_text", "text")):
        return value
    if isinstance(value, list) and value:
        for entry in value:
            _response(entry, display, record, field=field)
        return value
    raise ImportProblem(
        display,
        f"must be the response's text (a string, an object with generated_text or text, or a list of those), "
        f"not {shown(value)}",
        record=record,
        field=field,
    )


def _prompt(value: object, display: str, record: int, *, field: str) -> str:
    """The prompt's text ("" when not given). The harness writes the filled template as a string; anything else
    was stored as Python's spelling of it ("None") or as "" (an object), a prompt nobody sent."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise ImportProblem(display, f"must be the prompt's text, not {shown(value)}", record=record, field=field)


def system_name_check(name: str, *, display: str = "(outputs)") -> str:
    """The one check of a system's name (stripped): required, fits the column, and not the reference answer's name
    in any letter case (ranking and reports treat that system as the gold answer)."""
    name = (name or "").strip()
    if not name:
        raise ImportProblem(display, "a system name is required", field="system")
    if name.casefold() == System.REFERENCE_NAME.casefold():
        raise ImportProblem(
            display, f"{name!r} is reserved for the reference answers; choose another name", field="system"
        )
    return require_fits(name, System, "name", display, None, field="system")


def outputs_parse(
    paths: list[Path], *, limits: Limits | None = None, displays: dict | None = None
) -> list[ParsedOutput]:
    """Read and validate every file (no database access); raise :class:`ImportProblem` on the first problem."""
    limits = limits or upload_limits()
    displays = displays or {}
    parsed: list[ParsedOutput] = []
    for path in _expand(paths):
        display = displays.get(path, displays.get(str(path), path.name))
        reader = _parse_jsonl if _holds_jsonl(path) else _parse_harness
        parsed.extend(reader(path, limits, display))
    return parsed


def _holds_jsonl(path: Path) -> bool:
    if path.suffix == ".jsonl":
        return True
    return path.suffix == ".json" and path.name not in HARNESS_OUTPUT_FILES and _is_json_lines(path)


# --- matching ------------------------------------------------------------------------------------------------


def _match_items(parsed: list[ParsedOutput]) -> None:
    """Set ``item_id`` on every record: by uid, then by (qa_type, question, paragraph_id); unknown → refused."""
    by_uid: dict[str, int] = {}
    uids = sorted({p.uid for p in parsed})
    for start in range(0, len(uids), 10_000):
        by_uid.update(QAItem.objects.filter(uid__in=uids[start : start + 10_000]).values_list("uid", "id"))
    unmatched = [p for p in parsed if p.uid not in by_uid]
    by_content: dict[tuple, list[int]] = {}
    questions = sorted({p.question for p in unmatched if p.question})
    for start in range(0, len(questions), 2000):
        rows = QAItem.objects.filter(question__in=questions[start : start + 2000]).values_list(
            "id", "qa_type", "question", "paragraph_id"
        )
        for item_id, qa_type, question, paragraph_id in rows:
            by_content.setdefault((qa_type, question, paragraph_id), []).append(item_id)
    for p in parsed:
        if p.uid in by_uid:
            p.item_id = by_uid[p.uid]
            continue
        candidates = by_content.get((p.qa_type, p.question, p.paragraph_id), []) if p.question else []
        if len(candidates) == 1:
            p.item_id = candidates[0]
        elif len(candidates) > 1:
            raise ImportProblem(
                p.file, f"matches {len(candidates)} items by question and paragraph_id", record=p.record
            )
        else:
            raise ImportProblem(
                p.file,
                f"no item in the portal matches {_unmatched(p)}; import the items first",
                record=p.record,
                field="sample_id" if p.sample_id else None,
            )


def _unmatched(p: ParsedOutput) -> str:
    if p.sample_id:
        return f"sample_id {p.sample_id!r} (uid {p.uid})"
    return f"item_uid {p.uid!r}" if not p.question else f"question {p.question[:80]!r} (uid {p.uid})"


# --- the service ---------------------------------------------------------------------------------------------


def outputs_import(
    *,
    system_name: str,
    paths: list[Path],
    user: User | None = None,
    progress: Progress | None = None,
    family: str = "",
    parameter_count: int | None = None,
    displays: dict | None = None,
) -> OutputsImportResult:
    """Validate, match and store one system's outputs from harness files/folders or JSONL, all-or-nothing.

    Re-importing the same responses changes nothing; a changed response replaces the stored one and the change is
    audited (before/after). JSONL records naming another system in ``system`` are refused.
    """
    system_name = system_name_check(system_name)
    require_fits(family, System, "family", "(outputs)", None, field="family")
    parsed = outputs_parse(paths, displays=displays)
    for p in parsed:
        if p.system and p.system != system_name:
            raise ImportProblem(
                p.file,
                f"{p.system!r} is not the system being imported ({system_name!r})",
                record=p.record,
                field="system",
            )
    _match_items(parsed)
    seen: dict[int, ParsedOutput] = {}
    for p in parsed:
        assert p.item_id is not None  # _match_items matched every record or raised
        first = seen.setdefault(p.item_id, p)
        if first is not p:
            raise ImportProblem(
                p.file,
                f"the same item as record {first.record} of {first.file}",
                record=p.record,
                field="sample_id" if p.sample_id else None,
            )
    result = OutputsImportResult(system=system_name, files=sorted({p.file for p in parsed}))
    if progress is not None:
        progress.start(len(parsed), f"importing outputs of {system_name}")
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_OUTPUTS_LOCK])
        system = _system_upsert(name=system_name, family=family, parameter_count=parameter_count, user=user)
        existing = {o.item_id: o for o in SystemOutput.objects.filter(system=system, item_id__in=list(seen))}
        qa_types = dict(QAItem.objects.filter(id__in=list(seen)).values_list("id", "qa_type"))
        new, changed = [], []
        for p in parsed:
            assert p.item_id is not None  # matched above
            text, prompt = p.text, p.prompt
            result.by_type[qa_types[p.item_id]] = result.by_type.get(qa_types[p.item_id], 0) + 1
            current = existing.get(p.item_id)
            if current is None:
                new.append(
                    SystemOutput(system=system, item_id=p.item_id, response=text, raw=p.response_raw, prompt=prompt)
                )
            elif current.response != text or current.raw != p.response_raw:
                changed.append((current, current.response, p))
            else:
                result.unchanged += 1
        for start in range(0, len(new), _CHUNK):
            SystemOutput.objects.bulk_create(new[start : start + _CHUNK])
            if progress is not None:
                progress.advance(len(new[start : start + _CHUNK]))
        for output, before, p in changed:
            output.response, output.raw, output.prompt = p.text, p.response_raw, p.prompt
            output.save(update_fields=["response", "raw", "prompt", "imported_at"])
            audit_record(
                actor=user,
                obj=output,
                action="output_changed",
                before={"response": before},
                after={"response": output.response},
                note=f"{p.file} record {p.record}",
            )
        if progress is not None:
            progress.advance(len(changed) + result.unchanged)
        result.created, result.updated = len(new), len(changed)
        if new or changed:
            audit_record(actor=user, obj=system, action="outputs_imported", after=result.as_dict())
    return result


def outputs_import_request(
    *,
    system: str,
    paths: list[Path],
    displays: dict[str, str],
    family: str = "",
    parameter_count: int | None = None,
    user: User | None = None,
) -> Job:
    """Queue :func:`outputs_import` of uploaded files as a job (the upload page); returns the job."""
    params = {
        "system": system,
        "family": family,
        "parameter_count": parameter_count,
        "paths": [str(p) for p in paths],
        "displays": displays,
    }
    return job_start(kind="import_outputs", params=params, user=user)


def _system_upsert(*, name: str, family: str, parameter_count: int | None, user: User | None) -> System:
    system, created = System.objects.select_for_update().get_or_create(
        name=name, defaults={"family": family, "parameter_count": parameter_count}
    )
    if created:
        audit_record(actor=user, obj=system, action="system_created", after={"name": name})
        return system
    changes: dict[str, str | int] = {}
    if family and system.family != family:
        changes["family"] = family
    if parameter_count is not None and system.parameter_count != parameter_count:
        changes["parameter_count"] = parameter_count
    if changes:
        before = {k: getattr(system, k) for k in changes}
        System.objects.filter(pk=system.pk).update(**changes)
        audit_record(actor=user, obj=system, action="system_changed", before=before, after=changes)
        system.refresh_from_db()
    return system
