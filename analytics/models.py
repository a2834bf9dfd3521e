"""Stored results: automatic scoring runs (Task 1) with per-answer scores, and analytics reports."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from portal.jsonfields import FiniteJSONEncoder
from ranking.models import Study


class ScoringRun(models.Model):
    """One system's outputs scored with one metric profile, over a release (or every item it answered).

    The profile :attr:`PROMPTCBLUE` scores the scope's PromptCBLUE items with the official PromptCBLUE evaluation
    (:mod:`analytics.scoring.promptcblue`): ``summary`` holds the official report, each sample a
    :class:`PromptCblueScore`. Every other profile is the ClinIQLink metric, each answer an :class:`AnswerScore`.
    """

    PROMPTCBLUE = "promptcblue"

    system = models.ForeignKey("ranking.System", on_delete=models.CASCADE, related_name="scoring_runs")
    release = models.ForeignKey(
        "annotation.Release", null=True, blank=True, on_delete=models.PROTECT, related_name="scoring_runs"
    )
    profile = models.CharField(max_length=30, default="cliniqlink-2025")
    seed = models.BigIntegerField(default=0)
    job = models.ForeignKey("portal.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    summary = models.JSONField(
        default=dict, blank=True, encoder=FiniteJSONEncoder, help_text="The public scorer's summary keys."
    )
    run_record = models.JSONField(
        default=dict,
        blank=True,
        encoder=FiniteJSONEncoder,
        help_text="Profile, seed, baseline, stop words, model hash, versions.",
    )
    n_items = models.PositiveIntegerField(default=0)
    scoring_state = models.JSONField(
        default=dict,
        blank=True,
        encoder=FiniteJSONEncoder,
        help_text="A run scored in slices: what the whole submission shares (IDF table, paragraph baseline).",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        scope = self.release.label if self.release_id else "all answered items"
        return f"{self.system} · {self.profile} · {scope}"


class AnswerScore(models.Model):
    """The metric's numbers for one system answer. Unique per (run, item): a re-run task overwrites, never
    duplicates."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="+")
    output = models.ForeignKey("ranking.SystemOutput", null=True, on_delete=models.SET_NULL, related_name="scores")
    qa_type = models.CharField(max_length=30, db_index=True)
    index = models.PositiveIntegerField(help_text="Position in the submission file of its type.")
    semantic = models.FloatField(null=True)
    word = models.FloatField(null=True)
    sentence = models.FloatField(null=True)
    paragraph = models.FloatField(null=True)
    bleu = models.FloatField(null=True)
    rouge = models.FloatField(null=True)
    meteor = models.FloatField(null=True)
    correct = models.BooleanField(null=True)
    precision = models.FloatField(null=True)
    recall = models.FloatField(null=True)
    f1 = models.FloatField(null=True)
    predicted_step = models.IntegerField(null=True)
    step_distance = models.IntegerField(null=True)

    class Meta:
        ordering = ["run", "qa_type", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="answer_score_once_per_run")]

    def __str__(self) -> str:
        return f"run {self.run_id} · {self.qa_type} #{self.index}"

    @property
    def headline(self) -> float | None:
        """The number the task's leaderboard uses for this answer: semantic, correctness, or list F1."""
        if self.semantic is not None:
            return self.semantic
        if self.correct is not None:
            return float(self.correct)
        return self.f1


class PromptCblueScore(models.Model):
    """One PromptCBLUE sample of a run scored with the official evaluation: the gold and the generated answer as
    the official parser reads them, the generated lines no template of the task matched (parse misses), the
    sample's statistics for its task's figure, and its own score. Unique per (run, item), as :class:`AnswerScore`."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="promptcblue_scores")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="+")
    output = models.ForeignKey("ranking.SystemOutput", null=True, on_delete=models.SET_NULL, related_name="+")
    task = models.CharField(max_length=40)
    sample_id = models.CharField(max_length=500)
    answered = models.BooleanField(default=True, help_text="False: the system gave no answer; scored as empty text.")
    score = models.FloatField(null=True, help_text="The sample's own score, 0 to 1 (metrics.promptcblue.sample_score).")
    gold = models.JSONField(encoder=FiniteJSONEncoder, help_text="The gold answer as the official parser reads it.")
    prediction = models.JSONField(encoder=FiniteJSONEncoder, help_text="The generated answer as the parser reads it.")
    parse_misses = models.JSONField(default=list, help_text="Generated lines that matched no template of the task.")
    n_parse_misses = models.PositiveIntegerField(default=0)
    official_parser_fails = models.BooleanField(default=False)
    stats = models.JSONField(encoder=FiniteJSONEncoder, help_text="The sample's share of its task's figure.")

    class Meta:
        ordering = ["run", "pk"]
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="promptcblue_score_once_per_run")]
        indexes = [models.Index(fields=["run", "task"], name="promptcblue_score_run_task")]

    def __str__(self) -> str:
        return f"run {self.run_id} · {self.task} · {self.sample_id}"


class ScoringChunk(models.Model):
    """Texts of a scoring run that one task encodes into the embedding store (a run's work split across
    workers; :mod:`analytics.scoring.runs`). ``done_at`` is set once the vectors are stored; a redelivered task
    encodes its chunk again harmlessly and counts the attempt."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    texts = models.JSONField(help_text="The texts to encode (a list of strings).")
    attempts = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="scoring_chunk_once")]

    def __str__(self) -> str:
        return f"run {self.run_id} chunk {self.index}"


class ScoringSlice(models.Model):
    """Open-ended answers ``[start, stop)`` of a run scored in slices, one task each (:mod:`analytics.scoring.slices`).
    ``records`` keeps the metric's per-answer records, which the run's last task combines into the summary;
    ``done_at`` is set once they and the slice's scores are stored. A redelivered task scores it again harmlessly
    and counts the attempt."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="slices")
    index = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    records = models.JSONField(null=True, blank=True, encoder=FiniteJSONEncoder)
    attempts = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="scoring_slice_once")]

    def __str__(self) -> str:
        return f"run {self.run_id} slice {self.index}"


class TextEmbedding(models.Model):
    """A sentence embedding of the metric's model, shared by every worker and every later run.

    Keyed by the model (:attr:`metrics.Encoder.embedding_key`: weights hash and truncation length) and
    the SHA-256 of the text; the vector is 384 float32 values, little-endian. Rows older than
    ``METRIC_EMBEDDING_RETENTION_DAYS`` are deleted by a periodic task (they are re-encoded when needed)."""

    model_key = models.CharField(max_length=80)
    text_sha256 = models.CharField(max_length=64)
    vector = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model_key", "text_sha256"], name="text_embedding_once_per_model")
        ]

    def __str__(self) -> str:
        return f"{self.text_sha256[:12]} ({self.model_key[:12]})"


class Report(models.Model):
    """An analytics report computed by a job, stored with its parameters and a timestamp."""

    class Kind(models.TextChoices):
        VETTING_AGREEMENT = "vetting_agreement", "Vetting agreement"
        STUDY = "study", "Preference study: agreement, metric correlation, leaderboard"
        REVIEWER_QUALITY = "reviewer_quality", "Reviewer quality"

    kind = models.CharField(max_length=30, choices=Kind.choices)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True, encoder=FiniteJSONEncoder)
    job = models.ForeignKey("portal.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.created_at:%Y-%m-%d %H:%M}"

    #: The names of the studies named in ``params``, by id: filled in for a whole page of reports in one query by
    #: :func:`report_study_names_attach`; looked up on first use otherwise.
    study_names: dict[int, str] | None = None

    @property
    def parameters_text(self) -> str:
        """The parameters for people: the study by its name, the metric profile by its label ("—" when none)."""
        if self.study_names is None:
            report_study_names_attach([self])
        names = self.study_names or {}
        parts = []
        # the database keeps JSON keys in its own order: the study first, then the rest by name
        for key, value in sorted((self.params or {}).items(), key=lambda kv: (kv[0] != "study_id", kv[0])):
            if key == "study_id":
                parts.append(f"study “{names[value]}”" if value in names else f"study {value} (deleted)")
            elif key == "profile":
                parts.append(f"metric profile {value}")
            else:
                parts.append(f"{str(key).replace('_', ' ')} {value}")
        return " · ".join(parts) or "—"


def report_study_names_attach(reports) -> list[Report]:
    """Give every report its ``study_names`` with one query for all of them (a list of reports shows each one's
    study by name). Returns the reports as a list."""
    reports = list(reports)
    ids = {r.params.get("study_id") for r in reports if isinstance(r.params, dict)}
    ids = {i for i in ids if isinstance(i, int)}
    names = dict(Study.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}
    for report in reports:
        report.study_names = names
    return reports


class JudgeNuggetLabel(models.Model):
    """An automatic labeller's label for one nugget against one study answer: the portal's matcher, or an external
    judge whose labels were imported from a file. Physicians' labels are ``ranking.NuggetJudgement`` rows."""

    class Source(models.TextChoices):
        MATCHER = "matcher", "The portal's embedding matcher"
        IMPORT = "import", "Imported from a file"

    answer = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="judge_nugget_labels")
    nugget = models.ForeignKey("annotation.Nugget", on_delete=models.PROTECT, related_name="+")
    labeller = models.CharField(max_length=100, help_text='"matcher", or the judge\'s name as imported.')
    source = models.CharField(max_length=10, choices=Source.choices)
    label = models.CharField(max_length=12)
    sentence_index = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Matched sentence (matcher).")
    evidence = models.TextField(blank=True, help_text="The sentence the label rests on, where the labeller gave one.")
    similarity = models.FloatField(null=True, blank=True)
    job = models.ForeignKey("portal.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "nugget_id", "labeller"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "nugget", "labeller"], name="judge_nugget_label_unique")
        ]
        indexes = [models.Index(fields=["labeller"])]

    def __str__(self) -> str:
        return f"{self.labeller}: answer {self.answer_id} {self.nugget_id} {self.label}"


class JudgeScore(models.Model):
    """An automatic judge's score for one study answer (higher = better), imported from a file: an LLM judge run
    elsewhere. The study report compares every judge with the physicians (:mod:`analytics.judges.study`)."""

    answer = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="judge_scores")
    judge = models.CharField(max_length=100, help_text="The judge's name as imported.")
    score = models.FloatField(help_text="As given, or a given label's place on the ordered scale (the last is 0).")
    label = models.CharField(max_length=100, blank=True, help_text="The label the judge gave, when it gave one.")
    probability = models.FloatField(
        null=True, blank=True, help_text="The judge's probability (0 to 1) that the answer is good, when it gave one."
    )
    judge_family = models.CharField(
        max_length=100, blank=True, help_text='The judge\'s model family ("gpt", "llama"), when the file names it.'
    )
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "judge"]
        constraints = [models.UniqueConstraint(fields=["answer", "judge"], name="judge_score_once_per_answer")]
        indexes = [models.Index(fields=["judge"])]

    def __str__(self) -> str:
        return f"{self.judge}: answer {self.answer_id} {self.score}"


class JudgeAbstention(models.Model):
    """An automatic judge declining one study answer ("cannot judge" in its scores file). Kept apart from
    :class:`JudgeScore` so that every reader of scores sees only scores; imported and replaced with them."""

    answer = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="judge_abstentions")
    judge = models.CharField(max_length=100, help_text="The judge's name as imported.")
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "judge"]
        constraints = [models.UniqueConstraint(fields=["answer", "judge"], name="judge_abstention_once_per_answer")]

    def __str__(self) -> str:
        return f"{self.judge}: answer {self.answer_id} cannot judge"


class JudgeVerdict(models.Model):
    """An automatic judge's pairwise verdict on two answers to one study question, in the order it was shown them
    (imported from a file): with both orders of a pair, the judge card reads the judge's position bias."""

    class Verdict(models.TextChoices):
        FIRST = "first", "The answer shown first"
        SECOND = "second", "The answer shown second"
        TIE = "tie", "A tie"

    question = models.ForeignKey("ranking.StudyQuestion", on_delete=models.CASCADE, related_name="judge_verdicts")
    judge = models.CharField(max_length=100, help_text="The judge's name as imported.")
    first = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=6, choices=Verdict.choices)
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_id", "judge", "first_id", "second_id"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "first", "second"], name="judge_verdict_once_per_order"),
            models.CheckConstraint(condition=~models.Q(first=models.F("second")), name="judge_verdict_two_answers"),
        ]

    def __str__(self) -> str:
        return f"{self.judge}: {self.first_id} then {self.second_id}: {self.verdict}"


class SpanDetector(models.Model):
    """An automatic hallucination detector whose span predictions for a study's answers were imported from a file
    (Mu-SHROOM JSON Lines); scored against the physicians' spans on the detector leaderboard."""

    study = models.ForeignKey("ranking.Study", on_delete=models.CASCADE, related_name="span_detectors")
    name = models.CharField(max_length=100, help_text="Named like a judge: letters, digits, spaces and . _ ( ) + -.")
    file = models.CharField(max_length=255, blank=True, help_text="The file its predictions came from.")
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study_id", "name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="span_detector_once_per_study")]

    def __str__(self) -> str:
        return self.name


class SpanPrediction(models.Model):
    """A detector's labels for one study answer: soft labels ``[{"start", "end", "prob"}]`` and hard labels
    ``[[start, end]]`` in characters of :attr:`ranking.StudyAnswer.text` (checked on import)."""

    detector = models.ForeignKey(SpanDetector, on_delete=models.CASCADE, related_name="predictions")
    answer = models.ForeignKey("ranking.StudyAnswer", on_delete=models.CASCADE, related_name="span_predictions")
    soft_labels = models.JSONField(default=list)
    hard_labels = models.JSONField(default=list)

    class Meta:
        ordering = ["detector_id", "answer_id"]
        constraints = [models.UniqueConstraint(fields=["detector", "answer"], name="span_prediction_once_per_answer")]

    def __str__(self) -> str:
        return f"{self.detector_id}: answer {self.answer_id}"


class StoredBoard(models.Model):
    """A study's figures as the last job computed them (``analytics.boards``): what a page shows when
    computing them takes too long for a request at a large study's size. ``inputs`` records what they were computed
    from (submitted tasks, imported labels), so the page can say what has changed since."""

    inputs = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True, encoder=FiniteJSONEncoder)
    computed_at = models.DateTimeField(null=True, blank=True)
    job = models.ForeignKey("portal.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        abstract = True


class SpanLeaderboard(StoredBoard):
    """A span study's detector leaderboard (``analytics.spans.detectors``): every read answer scored against every
    detector with bootstrap intervals, computed after each import and on request."""

    study = models.OneToOneField("ranking.Study", on_delete=models.CASCADE, related_name="span_leaderboard")

    def __str__(self) -> str:
        return f"detector leaderboard of study {self.study_id}"


class NuggetLeaderboard(StoredBoard):
    """A nugget study's leaderboard and agreement (``analytics.nuggets.board``): every labeller's scores with
    bootstrap intervals, the physicians' agreement and each automatic labeller against them, computed on the
    page's first view, after a judge's import or a matcher run, and on request."""

    study = models.OneToOneField("ranking.Study", on_delete=models.CASCADE, related_name="nugget_leaderboard")

    def __str__(self) -> str:
        return f"nugget leaderboard of study {self.study_id}"
