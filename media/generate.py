"""Make the sample media files (images, texts, audio) that tests, tutorials and the demo import.

Deterministic: a fixed seed, numpy + Pillow for images, templates for texts, ``espeak-ng`` for
speech (resampled to 16 kHz with numpy) plus generated tones and silence. Run ``make media``
(or ``python media/generate.py``) to rewrite ``media/images``, ``media/texts`` and
``media/audio``; the outputs are committed and stay under 2 MB in all.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance

SEED = 13
HERE = Path(__file__).resolve().parent
RATE = 16_000
PALETTE = [
    (230, 57, 70),
    (241, 250, 238),
    (168, 218, 220),
    (69, 123, 157),
    (29, 53, 87),
    (255, 183, 3),
    (42, 157, 143),
    (233, 196, 106),
    (244, 162, 97),
    (131, 56, 236),
]
SIZES = [(64, 64), (96, 72), (128, 96), (160, 120), (200, 150), (240, 180), (320, 240)]


# ---------------------------------------------------------------------------------- images
def _colour(rng: np.random.Generator) -> tuple[int, int, int]:
    return PALETTE[int(rng.integers(len(PALETTE)))]


def scene(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """A landscape: sky gradient, sun, hills and a few houses."""
    width, height = size
    top, bottom = np.array(_colour(rng)), np.array(_colour(rng))
    ramp = np.linspace(0, 1, height)[:, None, None]
    sky = (top * (1 - ramp) + bottom * ramp).astype(np.uint8)
    image = Image.fromarray(np.broadcast_to(sky, (height, width, 3)).copy(), "RGB")
    draw = ImageDraw.Draw(image)
    sun = int(rng.integers(height // 10, height // 4))
    cx, cy = int(rng.integers(sun, width - sun)), int(rng.integers(sun, height // 2))
    draw.ellipse((cx - sun, cy - sun, cx + sun, cy + sun), fill=(255, 214, 10))
    ground = int(height * rng.uniform(0.55, 0.8))
    xs = np.linspace(0, width, 8)
    ys = ground + rng.integers(-height // 8, height // 8, size=8)
    hills = list(zip(xs.tolist(), ys.tolist(), strict=True))
    draw.polygon([*hills, (width, height), (0, height)], fill=_colour(rng))
    for _ in range(int(rng.integers(1, 4))):
        w = int(rng.integers(width // 10, width // 5))
        x, y = int(rng.integers(0, width - w)), ground - w // 2
        draw.rectangle((x, y, x + w, y + w), fill=_colour(rng))
        draw.polygon([(x, y), (x + w, y), (x + w // 2, y - w // 2)], fill=_colour(rng))
    return image


def shapes(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """Flat shapes (circles, rectangles, triangles) on a plain background."""
    width, height = size
    image = Image.new("RGB", size, _colour(rng))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(3, 9))):
        x0, y0 = int(rng.integers(0, width - 8)), int(rng.integers(0, height - 8))
        x1 = int(rng.integers(x0 + 4, min(width, x0 + width // 2) + 1))
        y1 = int(rng.integers(y0 + 4, min(height, y0 + height // 2) + 1))
        kind = int(rng.integers(3))
        if kind == 0:
            draw.ellipse((x0, y0, x1, y1), fill=_colour(rng))
        elif kind == 1:
            draw.rectangle((x0, y0, x1, y1), fill=_colour(rng))
        else:
            draw.polygon([(x0, y1), (x1, y1), ((x0 + x1) // 2, y0)], fill=_colour(rng))
    return image


def write_images(folder: Path, rng: np.random.Generator) -> None:
    """44 generated images in several modes and formats, plus 6 near-duplicates."""
    made: list[tuple[str, Image.Image]] = []
    for i in range(44):
        size = SIZES[i % len(SIZES)]
        image = scene(rng, size) if i % 2 == 0 else shapes(rng, size)
        name = f"{'scene' if i % 2 == 0 else 'shapes'}_{i:02d}"
        if i % 11 == 3:
            image = image.convert("L")  # grayscale
        elif i % 11 == 7:
            image = image.convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
        elif i % 11 == 9:
            image = image.convert("RGBA")
            image.putalpha(Image.linear_gradient("L").resize(image.size))
        made.append((name, image))
    for name, image in made:
        if image.mode in ("RGB", "L") and int(name[-2:]) % 3 == 0:
            image.save(folder / f"{name}.jpg", quality=82, optimize=True)
        else:
            image.save(folder / f"{name}.png", optimize=True)
    for name, image in made[:2]:  # near-duplicates: resized and slightly brightened copies
        three_quarters = (image.width * 3 // 4, image.height * 3 // 4)
        small = image.resize(three_quarters, Image.Resampling.LANCZOS)
        small.save(folder / f"{name}_small.png", optimize=True)
        ImageEnhance.Brightness(image.convert("RGB")).enhance(1.08).save(
            folder / f"{name}_bright.jpg", quality=82
        )
    for name, image in made[4:6]:  # and recompressed at a lower JPEG quality
        image.convert("RGB").save(folder / f"{name}_q40.jpg", quality=40)


# ----------------------------------------------------------------------------------- texts
PRODUCTS = ["kettle", "headphones", "backpack", "desk lamp", "coffee grinder", "rain jacket"]
POSITIVE = [
    "I love this {p}. {detail} Would buy again without a second thought.",
    "Excellent {p}! {detail} Five stars from me.",
    "The {p} arrived early and works perfectly. {detail} Really happy with it.",
    "Great value: this {p} beats the pricier ones I tried. {detail}",
]
NEGATIVE = [
    "Terrible {p}. {detail} I want a refund.",
    "The {p} broke after two days. {detail} Very disappointed.",
    "Do not buy this {p}. {detail} Waste of money.",
    "Awful experience with the {p}: {detail} One star.",
]
NEUTRAL = [
    "The {p} is fine. {detail} Nothing special either way.",
    "It is an ordinary {p}. {detail} Does what it says.",
]
GOOD_DETAILS = {
    "kettle": "It boils a full litre in under three minutes and stays quiet.",
    "headphones": "The sound is rich and the noise cancelling is superb.",
    "backpack": "Plenty of pockets and the straps are comfortable all day.",
    "desk lamp": "The light is warm and bright, with a lovely dimmer.",
    "coffee grinder": "The grind is even and the burrs are easy to clean.",
    "rain jacket": "It kept me completely dry in a downpour.",
}
BAD_DETAILS = {
    "kettle": "The lid leaks and the handle gets dangerously hot.",
    "headphones": "The left ear crackles and the battery dies in an hour.",
    "backpack": "A seam split open on the first trip.",
    "desk lamp": "It flickers constantly and the switch feels cheap.",
    "coffee grinder": "It is extremely loud and the grind is uneven.",
    "rain jacket": "Water soaked through the shoulders within minutes.",
}
TICKETS = [
    "Ticket: my order #{n} for a {p} has not arrived yet. Can you tell me where it is?",
    "Support request: the {p} I received is damaged. Please send a replacement.",
    "Hello, how do I reset the {p}? The manual does not explain it.",
    "Urgent: I was charged twice for order #{n} ({p}). Please refund the duplicate payment.",
    "Question about the warranty on my {p}: does it cover accidental damage?",
]


def write_texts(folder: Path, rng: np.random.Generator) -> None:
    """32 reviews (positive, negative, neutral) and 18 support tickets."""
    for i in range(32):
        product = PRODUCTS[i % len(PRODUCTS)]
        mood = ("positive", "negative", "positive", "negative", "neutral")[i % 5]
        if mood == "positive":
            template, detail = POSITIVE[int(rng.integers(len(POSITIVE)))], GOOD_DETAILS[product]
        elif mood == "negative":
            template, detail = NEGATIVE[int(rng.integers(len(NEGATIVE)))], BAD_DETAILS[product]
        else:
            template, detail = NEUTRAL[int(rng.integers(len(NEUTRAL)))], ""
        body = template.format(p=product, detail=detail).replace("  ", " ")
        (folder / f"review_{i:02d}_{mood}.txt").write_text(body + "\n")
    for i in range(18):
        product = PRODUCTS[int(rng.integers(len(PRODUCTS)))]
        template = TICKETS[i % len(TICKETS)]
        body = template.format(p=product, n=int(rng.integers(10_000, 99_999)))
        (folder / f"ticket_{i:02d}.txt").write_text(body + "\n")


# ----------------------------------------------------------------------------------- audio
PHRASES = [
    "Hello, and welcome to the workbench.",
    "The kettle arrived broken, please send a new one.",
    "These headphones sound wonderful.",
    "Where is my order?",
    "One, two, three, four, five.",
    "The quick brown fox jumps over the lazy dog.",
]


def _save_wav(path: Path, samples: np.ndarray) -> None:
    """16-bit mono PCM at 16 kHz."""
    pcm = np.clip(samples, -1, 1)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes((pcm * 32767).astype("<i2").tobytes())


def speech(text: str) -> np.ndarray:
    """``text`` spoken by espeak-ng, as float samples at 16 kHz (linear resampling)."""
    wav = subprocess.run(
        ["espeak-ng", "-v", "en", "-s", "165", "--stdout", text], capture_output=True, check=True
    ).stdout
    with wave.open(io.BytesIO(wav)) as clip:
        rate = clip.getframerate()
        raw = np.frombuffer(clip.readframes(clip.getnframes()), "<i2").astype(np.float64) / 32768
    times = np.arange(int(len(raw) * RATE / rate)) / RATE
    return np.interp(times, np.arange(len(raw)) / rate, raw)


def write_audio(folder: Path, rng: np.random.Generator) -> None:
    """Six speech clips, two tones, a chirp and a clip of silence (10 in all)."""
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is needed for the speech clips: apt-get install espeak-ng")
    for i, text in enumerate(PHRASES):
        _save_wav(folder / f"speech_{i:02d}.wav", speech(text))
    t = np.arange(int(RATE * 1.5)) / RATE
    _save_wav(folder / "tone_440hz.wav", 0.4 * np.sin(2 * np.pi * 440 * t))
    _save_wav(folder / "tone_1khz.wav", 0.3 * np.sin(2 * np.pi * 1000 * t))
    _save_wav(folder / "chirp.wav", 0.3 * np.sin(2 * np.pi * (200 + 900 * t) * t))
    quiet = rng.normal(0, 1e-4, int(RATE * 2.0))  # near-silence with a trace of noise
    _save_wav(folder / "silence.wav", quiet)


def main() -> None:
    """Rewrite every generated folder from scratch."""
    rng = np.random.default_rng(SEED)
    for name, writer in (("images", write_images), ("texts", write_texts), ("audio", write_audio)):
        folder = HERE / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        writer(folder, rng)
        files = sorted(folder.iterdir())
        print(f"{name}: {len(files)} files, {sum(f.stat().st_size for f in files) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
