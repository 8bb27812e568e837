"""Drawing a scene (Pillow), encoding it as H.264 mp4 (PyAV), and writing its ``.srt`` narration."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import av
from PIL import Image, ImageDraw, ImageFont

from skillharness.data.synth_scene import BACKGROUNDS, BAND_TOP, COLOURS, Scene, SceneObject

__all__ = ["KEYFRAME_INTERVAL_S", "narration_cues", "render_frame", "srt_text", "write_mp4"]

KEYFRAME_INTERVAL_S = 2
_RADIUS = 12
_BAND_COLOUR = (0, 0, 0)
_TEXT_COLOUR = (255, 255, 255)
_FILLER_COLOUR = (128, 128, 128)


@lru_cache(maxsize=1)
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=18)


def _polygon(
    cx: float, cy: float, radii: list[float], rotate: float = -math.pi / 2
) -> list[tuple[float, float]]:
    n = len(radii)
    return [
        (cx + r * math.cos(rotate + 2 * math.pi * k / n), cy + r * math.sin(rotate + 2 * math.pi * k / n))
        for k, r in enumerate(radii)
    ]


def _draw_object(draw: ImageDraw.ImageDraw, obj: SceneObject, t: float) -> None:
    cx, cy = obj.position(t)
    r = _RADIUS
    fill = COLOURS[obj.colour]
    box = (cx - r, cy - r, cx + r, cy + r)
    if obj.shape == "circle":
        draw.ellipse(box, fill=fill)
    elif obj.shape == "square":
        draw.rectangle((cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85), fill=fill)
    elif obj.shape == "triangle":
        draw.polygon(_polygon(cx, cy + 2, [r * 1.15] * 3), fill=fill)
    elif obj.shape == "diamond":
        draw.polygon(_polygon(cx, cy, [r] * 4), fill=fill)
    elif obj.shape == "star":
        draw.polygon(_polygon(cx, cy, [r * 1.2, r * 0.5] * 5), fill=fill)
    elif obj.shape == "hexagon":
        draw.polygon(_polygon(cx, cy, [r] * 6, rotate=0.0), fill=fill)
    else:  # cross
        w = r * 0.35
        draw.rectangle((cx - r, cy - w, cx + r, cy + w), fill=fill)
        draw.rectangle((cx - w, cy - r, cx + w, cy + r), fill=fill)


def render_frame(scene: Scene, t: float) -> Image.Image:
    """The picture of ``scene`` at time ``t``."""
    image = Image.new("RGB", (scene.width, scene.height), BACKGROUNDS[scene.background_at(t)])
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        if obj.visible(t):
            _draw_object(draw, obj, t)
    draw.rectangle((0, BAND_TOP, scene.width, scene.height), fill=_BAND_COLOUR)
    for caption in scene.captions:
        if caption.start_s <= t < caption.end_s:
            centre = (scene.width / 2, (BAND_TOP + scene.height) / 2)
            draw.text(centre, caption.word, fill=_TEXT_COLOUR, font=_font(), anchor="mm")
    return image


def _filler_frame(scene: Scene) -> Image.Image:
    """What a padded file shows before and after its scene: no object, no word."""
    image = Image.new("RGB", (scene.width, scene.height), _FILLER_COLOUR)
    ImageDraw.Draw(image).rectangle((0, BAND_TOP, scene.width, scene.height), fill=_BAND_COLOUR)
    return image


def write_mp4(scene: Scene, path: Path, *, lead_s: float = 0.0, tail_s: float = 0.0) -> None:
    """Encode the scene as H.264 (yuv420p, a keyframe every 2 s, index at the front of the file).

    ``lead_s`` / ``tail_s`` seconds of filler before / after it make a longer file with the scene
    inside it, at ``[lead_s, lead_s + duration_s]`` (a clip window, as MVBench's).
    """
    gop = scene.fps * KEYFRAME_INTERVAL_S
    with av.open(str(path), mode="w", format="mp4", container_options={"movflags": "+faststart"}) as out:
        stream = out.add_stream("libx264", rate=scene.fps)
        stream.width, stream.height, stream.pix_fmt = scene.width, scene.height, "yuv420p"
        stream.codec_context.gop_size = gop
        stream.codec_context.thread_count = 1  # deterministic bytes, and polite on a shared machine
        # mbtree=0: x264's macroblock tree reads memory it never wrote, so with it the same scene
        # encoded twice in one process could differ (about one encode in 300, by one grey level).
        stream.options = {
            "preset": "veryfast",
            "crf": "18",
            "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:mbtree=0",
        }
        lead, tail = round(lead_s * scene.fps), round(tail_s * scene.fps)
        for index in range(-lead, scene.n_frames + tail):
            inside = 0 <= index < scene.n_frames
            image = render_frame(scene, index / scene.fps) if inside else _filler_frame(scene)
            frame = av.VideoFrame.from_image(image)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def _stamp(t: float) -> str:
    ms = round(t * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def _narration(scene: Scene) -> list[tuple[float, str]]:
    events = [(o.appear_s, f"Look, a {o.name}.") for o in scene.objects]
    events += [(start, f"Now the background turns {name}.") for start, name in scene.backgrounds[1:]]
    events += [(c.start_s, "Can you read the word at the bottom?") for c in scene.captions]
    return sorted(events)


def narration_cues(scene: Scene) -> list[tuple[float, float, str]]:
    """The scene's narration: (start, end, text) per line, each shown for up to two seconds."""
    return [(start, min(start + 2.0, scene.duration_s), text) for start, text in _narration(scene)]


def srt_text(scene: Scene) -> str:
    """The scene's narration as SRT, each line wrapped in a ``<font>`` tag as Video-MME's are."""
    blocks = []
    for number, (start, end, text) in enumerate(narration_cues(scene), start=1):
        wrapped = f'<font color="white" size=".72c">{text}</font>'
        blocks.append(f"{number}\n{_stamp(start)} --> {_stamp(end)}\n{wrapped}\n")
    return "\n".join(blocks)
