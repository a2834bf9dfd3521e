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

See ``docs/metric.md`` for the algorithm; :mod:`.profiles` lists every reproduced quirk with its section.
"""

from .encoder import Encoder, TextVectorStore, shared_encoder
from .profiles import DEFAULT_PROFILE, PROFILES, Profile, get_profile
from .scorer import QA_TYPES, SubmissionScore, score_submission
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
    "SubmissionScore",
    "TextMetrics",
    "TextVectorStore",
    "get_profile",
    "load_submission_dir",
    "score_submission",
    "shared_encoder",
    "shared_text_metrics",
]
