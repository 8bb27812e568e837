"""The records of a run comparison: what ``skillharness compare`` prints and ``--json`` writes.

Run B against run A on the sealed test pool, paired by question: each row holds both runs'
accuracies and the paired difference B − A, with the same cells (:class:`ArmCell`,
:class:`PairedCell`) the holdout report uses, so both read alike. In a :class:`PairedCell` here
the "final" side is B and the "baseline" side is A.
"""

from __future__ import annotations

from pydantic import Field

from skillharness.eval.holdout_report import ArmCell, Grouping, PairedCell
from skillharness.util.model import StrictModel

__all__ = ["CompareRow", "ComparedRun", "RunComparison"]


class ComparedRun(StrictModel):
    """One side of the comparison: the run named, and the run whose test predictions stand for it."""

    run_id: str = Field(description="The run named on the command line.")
    kind: str = Field(description="Its kind: train (its holdout is compared), eval or infer.")
    predictions_run_id: str = Field(description="The run whose test-pool predictions are compared.")
    eval_id: str | None = Field(None, description="The holdout evaluation read (training runs only).")
    label: str = Field(description="The bundle compared, as the holdout names it (or the run id).")
    bundle_hash: str
    pools_sha256: str
    status: str = Field(description="The predictions run's status (finished, interrupted, ...).")


class CompareRow(StrictModel):
    """Both runs on one group of test questions, and B − A on the questions both answered."""

    grouping: Grouping
    label: str
    a: ArmCell
    b: ArmCell
    paired: PairedCell = Field(
        description="B minus A: wins are questions B did better on (McNemar's c), losses A (b)."
    )

    @property
    def mcnemar_b(self) -> int:
        """Discordant questions A did better on (right in A, wrong in B with one sample)."""
        return self.paired.losses

    @property
    def mcnemar_c(self) -> int:
        """Discordant questions B did better on."""
        return self.paired.wins


class RunComparison(StrictModel):
    """Run B against run A on the same test questions: overall, per task type, per duration."""

    a: ComparedRun
    b: ComparedRun
    pools_sha256: str
    confidence: float
    samples: int = Field(description="Samples per question in each run (the same in both).")
    questions: int = Field(description="Test questions both runs were asked.")
    rows: tuple[CompareRow, ...]
    test_pool_runs: int = Field(description="Evaluations of this split's test pool so far.")
    test_pool_other_runs: int = Field(0, description="Other runs (infer --pool test) that read it too.")

    def rows_of(self, grouping: Grouping) -> list[CompareRow]:
        return [row for row in self.rows if row.grouping == grouping]

    @property
    def overall(self) -> CompareRow:
        return self.rows_of("overall")[0]
