"""The wording banks of the simulated world: insights, decoys, harmful rules, filler ("useless" lines,
each worth a small seeded amount, see ``world.filler_effect_sd``) and the forms of a restated insight.

A *decoy* reads like an insight (a concrete procedure for its task type) and is worth exactly
nothing: the text alone cannot tell it from one, so neither can the rank role.

Each entry is a tuple of wordings; the first is canonical, the others are accepted paraphrases.
A wording is *present* in a text when it appears there after both are normalized (lower case,
every run of non-alphanumeric characters turned into one space), so markdown bullets, line
breaks and punctuation do not matter.
"""

from __future__ import annotations

import re

__all__ = [
    "DECOY_BANK",
    "GENERIC_DECOYS",
    "GENERIC_INSIGHTS",
    "HARMFUL_RULES",
    "INSIGHT_BANK",
    "RESTATE_FORMS",
    "USELESS_RULES",
    "normalize_text",
]

Wordings = tuple[str, ...]

INSIGHT_BANK: dict[str, tuple[Wordings, ...]] = {
    "Temporal Perception": (
        (
            "Locate the moment the question names before judging what happens there.",
            "First find the time span the question refers to, then judge it.",
            "Pin down when the asked-about moment occurs before answering.",
        ),
        (
            "Compare frames from the start and the end of the video to judge order.",
            "Check early and late frames side by side to decide what came first.",
            "Look at the opening and closing frames together when order matters.",
        ),
        (
            "Request denser frames around scene changes.",
            "Ask for more frames where the scene cuts.",
            "Sample frames more tightly near shot boundaries.",
        ),
    ),
    "Spatial Perception": (
        (
            "Describe positions relative to the camera, not to the person in view.",
            "Left and right are from the viewer's side, not the subject's.",
            "Judge directions from the camera's point of view.",
        ),
        (
            "Use stable landmarks in the frame to judge where objects are.",
            "Anchor object positions to fixed landmarks in the scene.",
            "Judge location against things that do not move in the shot.",
        ),
        (
            "Check the same object in two frames before judging distance.",
            "Confirm distances by finding the object in more than one frame.",
            "Judge how far apart things are only after seeing them in two frames.",
        ),
    ),
    "Attribute Perception": (
        (
            "Judge colours in frames with even lighting, not in shadow.",
            "Read an object's colour where the lighting is neutral.",
            "Avoid judging colour in dark or tinted frames.",
        ),
        (
            "Zoom in on the object the question names before judging its attributes.",
            "Ask for close frames of the named object before describing it.",
            "Get a clear view of the object itself before naming its properties.",
        ),
        (
            "Prefer the attribute seen in most frames over a single frame.",
            "Trust what most frames show about an attribute, not one outlier.",
            "When frames disagree about an attribute, go with the majority.",
        ),
    ),
    "Action Recognition": (
        (
            "Watch the hands: most actions are defined by what the hands do.",
            "Identify the action from the person's hand movements.",
            "Hand motion usually tells you which action is happening.",
        ),
        (
            "An action needs several consecutive frames; one frame shows only a pose.",
            "Do not name an action from a single still frame.",
            "Confirm an action across a run of consecutive frames.",
        ),
        (
            "Use the subtitles to confirm what the person says they are doing.",
            "Check the narration for the name of the action.",
            "Spoken descriptions often name the action outright; read them.",
        ),
    ),
    "Object Recognition": (
        (
            "Name the object from its shape and use, not only its colour.",
            "Identify objects by form and function rather than colour alone.",
            "Colour alone is not enough to say what an object is.",
        ),
        (
            "Look for the object in frames where it is in focus.",
            "Pick in-focus frames to recognise objects.",
            "Recognise objects only from sharp frames.",
        ),
        (
            "Read any visible labels or logos on the object.",
            "Printed labels on an object often name it; read them.",
            "Check packaging text and logos to identify an object.",
        ),
    ),
    "OCR Problems": (
        (
            "Request frames where the text is largest and sharpest.",
            "Ask for the frames in which the writing is clearest.",
            "Get the sharpest, biggest view of the text before reading it.",
        ),
        (
            "Copy the text character by character before matching options.",
            "Transcribe the visible text exactly, then compare it with the options.",
            "Read the letters one by one before choosing an option.",
        ),
        (
            "On-screen text may differ from the subtitles; trust the frame.",
            "When captions and on-screen text disagree, go with what is on screen.",
            "Do not substitute subtitle text for the text shown in the frame.",
        ),
    ),
    "Counting Problem": (
        (
            "Count each distinct object once, across all frames.",
            "Avoid counting the same item twice when it appears in several frames.",
            "Each object counts once no matter how many frames show it.",
        ),
        (
            "Find the single frame that shows all the objects at once and count there.",
            "Count in the frame where every item is visible together.",
            "Pick one frame that shows the whole set and count in it.",
        ),
        (
            "Count slowly in a fixed order, left to right.",
            "Sweep the frame left to right while counting.",
            "Use a fixed scan order so nothing is counted twice or skipped.",
        ),
    ),
    "Temporal Reasoning": (
        (
            "Order events by the frame timestamps, not by the order the options list them.",
            "Use the timestamps of frames to sequence events.",
            "The option order says nothing about event order; use the time stamps.",
        ),
        (
            "Cause comes before effect: check which event happened earlier.",
            "A cause must precede its effect in the video.",
            "Verify the earlier event before calling it the cause.",
        ),
        (
            "Sample frames across the whole video before reasoning about order.",
            "Cover the full length of the video when sequencing events.",
            "Do not reason about order from frames of one part only.",
        ),
    ),
    "Spatial Reasoning": (
        (
            "Build a mental map of the scene from several viewpoints.",
            "Combine several camera angles into one layout of the scene.",
            "Work out the scene layout from more than one view.",
        ),
        (
            "Check which objects occlude others to infer depth.",
            "Use occlusion to tell what is in front.",
            "Whatever hides part of another object is closer to the camera.",
        ),
        (
            "Track the moving object's path across frames before answering where it went.",
            "Follow the object's route frame by frame before saying where it ended up.",
            "Trace the path of the moving thing across frames.",
        ),
    ),
    "Action Reasoning": (
        (
            "Infer intent from what the person does next.",
            "Look at the following action to work out why the person acted.",
            "The next step usually reveals the purpose of an action.",
        ),
        (
            "Use the narration to learn why an action is done.",
            "Subtitles often explain the reason for an action; read them.",
            "The spoken explanation usually gives the purpose.",
        ),
        (
            "Rule out options that contradict what is visible.",
            "Eliminate answers that the frames clearly contradict.",
            "Discard any option the video visibly disproves.",
        ),
    ),
    "Object Reasoning": (
        (
            "Reason from how the object is used in the video, not from general knowledge.",
            "Base object questions on the object's use in this video.",
            "What the object does here matters more than what it usually does.",
        ),
        (
            "Check what happens to the object at the end of the video.",
            "Look at the object's final state near the end.",
            "The object's fate is usually shown in the last frames.",
        ),
        (
            "Relate the object to the people handling it.",
            "Consider who uses the object and how.",
            "Connect the object with the person interacting with it.",
        ),
    ),
    "Information Synopsis": (
        (
            "Sample frames evenly across the whole video before summarising.",
            "Spread frames over the entire video for a summary question.",
            "A summary needs frames from beginning, middle and end.",
        ),
        (
            "Read the subtitles for the main topic.",
            "The narration usually states the video's topic.",
            "Use the spoken text to find what the video is about.",
        ),
        (
            "Choose the option that covers the whole video, not one scene.",
            "Prefer the answer describing the full video over one part.",
            "A synopsis answer must fit every part of the video.",
        ),
    ),
}

# For task types outside the bank (another benchmark): ``{task}`` is replaced by its name.
GENERIC_INSIGHTS: tuple[Wordings, ...] = (
    (
        "For {task} questions, gather evidence from several frames before answering.",
        "In {task} questions, base the answer on more than one frame.",
        "{task}: never answer from a single frame.",
    ),
    (
        "For {task} questions, check the subtitles for direct statements.",
        "In {task} questions, read the narration for explicit clues.",
        "{task}: the spoken text often settles the question.",
    ),
    (
        "For {task} questions, eliminate options the video contradicts.",
        "In {task} questions, rule out answers the frames disprove.",
        "{task}: discard contradicted options first.",
    ),
)

# Plausible concrete rules that do nothing, one per task type: worded like the insights above.
DECOY_BANK: dict[str, tuple[Wordings, ...]] = {
    "Temporal Perception": (
        (
            "Note the frame index of each event before comparing their times.",
            "Write down the frame number of every event you compare in time.",
        ),
    ),
    "Spatial Perception": (
        (
            "Estimate object sizes against the width of the frame before judging position.",
            "Measure objects against the frame width before placing them.",
        ),
    ),
    "Attribute Perception": (
        (
            "Name the attribute in the words of the options before looking at frames.",
            "Restate the asked attribute in the options' own words first.",
        ),
    ),
    "Action Recognition": (
        (
            "List every visible body part before naming the action.",
            "Enumerate the visible limbs before deciding on the action.",
        ),
    ),
    "Object Recognition": (
        (
            "Describe the background behind the object before naming it.",
            "Characterise the scene around an object before identifying it.",
        ),
    ),
    "OCR Problems": (
        (
            "Note the font style of the text before reading it.",
            "Identify the typeface of on-screen text before transcribing it.",
        ),
    ),
    "Counting Problem": (
        (
            "Announce the expected count range before counting.",
            "Guess a range for the count first, then count.",
        ),
    ),
    "Temporal Reasoning": (
        (
            "Label each event with a short verb phrase before ordering them.",
            "Give every event a two-word label before sequencing.",
        ),
    ),
    "Spatial Reasoning": (
        (
            "Name the room or setting before reasoning about layout.",
            "State what kind of place the scene is before mapping it.",
        ),
    ),
    "Action Reasoning": (
        (
            "Describe the person's clothing before inferring their intent.",
            "Note what the person wears before reasoning about why they act.",
        ),
    ),
    "Object Reasoning": (
        (
            "Guess the object's material before reasoning about its use.",
            "Decide what the object is made of before judging its purpose.",
        ),
    ),
    "Information Synopsis": (
        (
            "Count the scene cuts before choosing a summary.",
            "Tally the number of shots in the video before summarising.",
        ),
    ),
}

# For task types outside the bank: ``{task}`` is replaced by its name.
GENERIC_DECOYS: tuple[Wordings, ...] = (
    (
        "For {task} questions, note the video's resolution before answering.",
        "In {task} questions, check the frame size before deciding.",
    ),
)

HARMFUL_RULES: tuple[Wordings, ...] = (
    ("When unsure, pick A.", "If in doubt, answer A.", "Default to option A when uncertain."),
    ("Ignore the subtitles.", "Never read the subtitles.", "Subtitles are noise; skip them."),
    (
        "Answer from the first frame only.",
        "The first frame is enough to answer.",
        "Decide from the opening frame alone.",
    ),
    (
        "Prefer the longest option.",
        "The longest answer is usually right.",
        "Pick the option with the most words.",
    ),
    (
        "Answer from general knowledge rather than the video.",
        "Rely on what you already know instead of the video.",
        "Use common sense instead of watching the frames.",
    ),
)

USELESS_RULES: tuple[str, ...] = (
    "Read the question carefully.",
    "Be thorough and precise.",
    "Think step by step.",
    "Consider every option before answering.",
    "Stay focused on the task.",
    "Double-check your work.",
    "Keep the answer concise.",
    "Be careful with details.",
)

# How slow momentum restates an insight the body already holds. The world scores a needed insight
# restated in the clear form up and in the muddled form down (world.restate_gain); the plain form
# (the only one before) is worth nothing. Each form is followed by an accepted wording.
RESTATE_FORMS: dict[str, str] = {
    "clear": "Always apply this rule: {wording}",
    "plain": "Keep in mind: {wording}",
    "muddled": "Sometimes, if it seems to fit: {wording}",
}

_NON_WORD = re.compile(r"[^a-z0-9]+")


def normalize_text(text: str) -> str:
    """Lower case, runs of non-alphanumerics collapsed to one space, padded with spaces.

    The padding lets a caller test ``normalize_text(w) in normalize_text(text)`` on whole words.
    """
    return " " + _NON_WORD.sub(" ", text.lower()).strip() + " "
