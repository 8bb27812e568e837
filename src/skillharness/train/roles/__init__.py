"""The model roles' prompts: what each template gets, the templates themselves, and how replies are read."""

from __future__ import annotations

from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS, CaseView, EditSetView, SpanView
from skillharness.train.roles.replies import (
    ConsolidateReply,
    JudgeReply,
    MomentumReply,
    RankReply,
    ReplyRefusal,
    parse_reply,
)
from skillharness.train.roles.templates import (
    PromptTemplates,
    RenderedPrompt,
    check_templates,
    load_templates,
    packaged_prompts,
)

__all__ = [
    "TEMPLATE_SPECS",
    "CaseView",
    "ConsolidateReply",
    "EditSetView",
    "JudgeReply",
    "MomentumReply",
    "PromptTemplates",
    "RankReply",
    "RenderedPrompt",
    "ReplyRefusal",
    "SpanView",
    "check_templates",
    "load_templates",
    "packaged_prompts",
    "parse_reply",
]
