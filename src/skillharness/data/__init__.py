"""Questions, loaders, the synthetic benchmark and the frozen split."""

from skillharness.data.questions import OPTION_LETTERS, VIDEO_MME, Benchmark, Question, TaskType, slugify

__all__ = ["OPTION_LETTERS", "VIDEO_MME", "Benchmark", "Question", "TaskType", "slugify"]
