"""Pure statistics for the portal's analytics (no Django imports): agreement, rankings, metric correlation,
leaderboard, a shared bootstrap and small plots. See the README, "Statistics"."""

from .agreement import agreement_summary, cohen_kappa, fleiss_kappa, krippendorff_alpha, percent_agreement
from .correlation import pairwise_accuracy, segment_tau_b, system_correlation
from .leaderboard import Leaderboard, Standing, bradley_terry_leaderboard
from .rankings import PerItemResult, kendall_w, mean_pairwise_tau_b
from .results import StatResult, per_group

__all__ = [
    "Leaderboard",
    "PerItemResult",
    "Standing",
    "StatResult",
    "agreement_summary",
    "bradley_terry_leaderboard",
    "cohen_kappa",
    "fleiss_kappa",
    "kendall_w",
    "krippendorff_alpha",
    "mean_pairwise_tau_b",
    "pairwise_accuracy",
    "per_group",
    "percent_agreement",
    "segment_tau_b",
    "system_correlation",
]
