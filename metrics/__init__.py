"""The ClinIQLink automatic metric (Task 1), pure Python: no Django imports anywhere in this package.

Public API::

    encoder = shared_encoder()               # all-MiniLM-L6-v2, loaded once per process (offline)
    text = shared_text_metrics()             # BLEU / ROUGE / METEOR with the offline NLTK data, once
    sub = load_submission_dir(path)          # harness folder → inputs/responses per type (checked)
    result = score_submission(sub.inputs, sub.responses, profile="cliniqlink-2025", seed=0,
                              encoder=encoder, text_metrics=text)
    result.summary      # public summary keys (overall_effectiveness, true_false_accuracy, …)
    result.per_type     # {qa_type: TypeResult(summary, items)}
    result.item_rows()  # one dict per item, the shape of metric-reference/expected.jsonl
    result.run          # run record: profile, seed, baseline, stop-word version, weights SHA-256, versions

    # The same run split across workers (one home: score_submission is these three over one slice):
    state = scoring_state(sub.inputs, sub.responses, encoder=encoder)     # IDF + baseline, JSON via to_json()
    part = score_slice(sub.inputs, sub.responses, state, 0, state.n_open, encoder=encoder, text_metrics=text)
    result = combine_slices(sub.inputs, sub.responses, state, part)

See ``docs/metric.md`` for the algorithm; :mod:`.profiles` lists every reproduced quirk with its section.
"""

from .encoder import Encoder, TextVectorStore, shared_encoder
from .profiles import DEFAULT_PROFILE, PROFILES, Profile, get_profile
from .scorer import (
    QA_TYPES,
    ScoringState,
    SubmissionScore,
    combine_slices,
    score_slice,
    score_submission,
    scoring_state,
)
from .submission import Problem, Submission, SubmissionError, load_submission_dir
from .text_metrics import TextMetrics, shared_text_metrics

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "QA_TYPES",
    "Encoder",
    "Problem",
    "Profile",
    "Submission",
    "SubmissionError",
    "ScoringState",
    "SubmissionScore",
    "TextMetrics",
    "TextVectorStore",
    "combine_slices",
    "get_profile",
    "load_submission_dir",
    "score_slice",
    "score_submission",
    "scoring_state",
    "shared_encoder",
    "shared_text_metrics",
]
