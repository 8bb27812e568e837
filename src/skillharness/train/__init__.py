"""Training: what the loop stands on so far — the acceptance gate and the prompt templates.

The loop itself (rollout, diagnosis, evolution, validation, momentum, checkpoints) is the next
milestone; :mod:`skillharness.train.gate` and :mod:`skillharness.train.templates` are complete.
"""

from skillharness.train.templates import PromptTemplates, RenderedPrompt, check_templates, load_templates

__all__ = ["PromptTemplates", "RenderedPrompt", "check_templates", "load_templates"]
