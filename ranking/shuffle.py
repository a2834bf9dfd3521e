"""Per-ranker answer shuffles (pure, no Django).

Each (study, ranker, item) gets its own seed: HMAC-SHA256 of the ranker and item ids keyed by the study's secret
(``Study.shuffle_secret``, 32 random bytes, never shown to rankers). Keyed, because a ranker knows their own id, can
guess item ids and the study seed (0 by default): with a plain hash of those they could compute which slot holds the
reference. The seed is the same on every machine and every Python run (``hash()`` is salted per process), so an
organizer with the secret reproduces every order. The permutation is a Fisher–Yates shuffle driven by
``random.Random`` seeded with that integer, which is deterministic for integer seeds. The result is stored on the
task anyway, so a later change here never reorders work already handed out.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import string

SLOT_LETTERS = string.ascii_uppercase


def new_shuffle_secret() -> str:
    """32 random bytes, hex: the key of a study's shuffles."""
    return secrets.token_hex(32)


def task_seed(*, secret: str, ranker_id: int, item_id: int) -> str:
    """Hex HMAC-SHA256 of the ranker and item ids keyed by the study's secret (hex); stable across processes and
    machines, unpredictable without the secret."""
    message = f"ranking:{ranker_id}:{item_id}".encode()
    return hmac.new(bytes.fromhex(secret), message, hashlib.sha256).hexdigest()


def permutation(n: int, seed: str) -> list[int]:
    """A uniformly random permutation of ``range(n)`` determined by ``seed`` (hex string)."""
    order = list(range(n))
    random.Random(int(seed, 16)).shuffle(order)
    return order


def seeded_fraction(seed: str, salt: str) -> float:
    """A number in [0, 1) derived from ``seed`` and ``salt``; used for the "ask the unblinding question" draw."""
    digest = hashlib.sha256(f"{salt}:{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def slot_letter(position: int) -> str:
    """Letter of a 0-based presented position: A, B, … Z, then AA, AB… (studies rarely exceed 26 answers)."""
    if position < 26:
        return SLOT_LETTERS[position]
    return SLOT_LETTERS[position // 26 - 1] + SLOT_LETTERS[position % 26]


def sample_items(item_ids: list[int], *, size: int | None, seed: int) -> list[int]:
    """A seeded sample of ``size`` ids (all of them, shuffled, when size is None or larger than the list)."""
    ids = sorted(item_ids)
    rng = random.Random(int(hashlib.sha256(f"sample:{seed}".encode()).hexdigest(), 16))
    rng.shuffle(ids)
    return ids if size is None else ids[:size]
