"""Where a reference protocol lets its user put instructions, and the bundle's text placed there.

``agent.protocol_bundle_slot`` says whether a reference request carries the bundle:

- ``none`` (default): no bundle text; the request is the reference's, byte for byte.
- ``auto``: the bundle's text in the one place the reference itself offers its user for
  instructions, so the request is one that reference could send (docs/protocols.md, *The bundle
  under a reference protocol*). Read at the commits pinned in docs/protocols.md:

  * lmms-eval's ``videomme`` task: its ``lmms_eval_specific_kwargs`` ``post_prompt`` (a task
    yaml the user writes), which ``videomme_doc_to_text`` appends after the options. Its
    ``--system_instruction`` flag does not reach the chat wrapper's messages (the wrapper builds
    them from ``doc_to_messages`` and drops the context string), and ``videomme_w_subtitle``'s
    text reads neither ``pre_prompt`` nor ``post_prompt``: no slot there.
  * VLMEvalKit: its API wrapper's ``system_prompt`` (a model setting), sent as a system message
    ``{"role": "system", "content": ...}`` before the user message (``vlmeval/api/gpt.py``,
    ``prepare_inputs``). Its dataset's ``SYS`` part is a class constant, not a setting.
  * The official Video-MME prompt: a fixed template with no place for other text: refused.

- ``system``: a system message under any reference (our own slot, not one a reference offers;
  what training from a reference protocol evolves).

The bundle's text is its system prompt followed by the skill document of the question's task
type (:func:`skillharness.agent.prompt.system_message`).
"""

from __future__ import annotations

from enum import StrEnum

from skillharness.agent.protocols.names import ProtocolName
from skillharness.agent.protocols.prompts import LMMS_EVAL_POST_PROMPT
from skillharness.agent.protocols.tasks import lmms_eval_task
from skillharness.errors import BundleSlotError

__all__ = [
    "BundleSlot",
    "BundleSlotError",
    "UpstreamSlot",
    "check_bundle_slot",
    "lmms_eval_post_prompt",
    "resolve_slot",
]

_KEY = "agent.protocol_bundle_slot"


class BundleSlot(StrEnum):
    """The ``agent.protocol_bundle_slot`` setting."""

    NONE = "none"
    AUTO = "auto"
    SYSTEM = "system"


class UpstreamSlot(StrEnum):
    """Where the bundle's text goes in the request, named by the upstream setting that puts it there."""

    POST_PROMPT = "post_prompt"  # lmms-eval: the task's post_prompt, after the options
    SYSTEM_PROMPT = "system_prompt"  # VLMEvalKit: the API wrapper's system message
    SYSTEM_MESSAGE = "system_message"  # ours (slot: system): a system message under any reference


def _refuse(protocol: ProtocolName, why: str) -> BundleSlotError:
    return BundleSlotError(
        f"agent.protocol {protocol.value} has no slot for a bundle's text: {why}. Run it with "
        f"{_KEY}: none (the plain reference request), or {_KEY}: system to send the bundle as a "
        "system message (a request that reference does not make; see docs/protocols.md)",
        key=_KEY,
        protocol=protocol.value,
    )


def resolve_slot(
    protocol: ProtocolName, slot: BundleSlot, *, subtitles: bool, benchmark: str | None
) -> UpstreamSlot | None:
    """Where ``slot`` puts the bundle's text under ``protocol`` (None: nowhere, the plain request).

    Raises :class:`BundleSlotError` when ``auto`` meets a request with no user slot.
    """
    if slot is BundleSlot.NONE or protocol is ProtocolName.SKILLHARNESS:
        return None
    if slot is BundleSlot.SYSTEM:
        return UpstreamSlot.SYSTEM_MESSAGE
    if protocol is ProtocolName.VLMEVALKIT:
        return UpstreamSlot.SYSTEM_PROMPT
    if protocol is ProtocolName.OFFICIAL:
        raise _refuse(protocol, "the Video-MME README's prompt is a fixed template")
    task = lmms_eval_task(benchmark)
    if task is not None:
        raise _refuse(
            protocol,
            f"no user slot is mapped for lmms-eval's {task.spec.task} task (only videomme's post_prompt)",
        )
    if subtitles:
        raise _refuse(
            protocol,
            "lmms-eval's videomme_w_subtitle text reads neither pre_prompt nor post_prompt "
            "(set agent.subtitles: false for videomme, whose post_prompt is the slot)",
        )
    return UpstreamSlot.POST_PROMPT


def check_bundle_slot(
    protocol: ProtocolName, slot: BundleSlot, *, subtitles: bool, benchmark: str | None
) -> None:
    """Refuse, before any question is asked, a slot the run's protocol does not have."""
    resolve_slot(protocol, slot, subtitles=subtitles, benchmark=benchmark)


def lmms_eval_post_prompt(bundle_text: str) -> str:
    """The ``post_prompt`` a user's videomme task yaml sets to carry ``bundle_text``: the text on its
    own lines before the default post_prompt, which stays the prompt's last line (the answer format
    the task's 16 tokens leave room for)."""
    return "\n" + bundle_text + LMMS_EVAL_POST_PROMPT
