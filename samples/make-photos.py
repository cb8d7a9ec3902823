#!/usr/bin/env python3
"""Draws galleryd's sample photos: small procedural landscapes (sky, sun or moon, hills, water),
written as PPM and turned into JPEG by libjpeg-turbo's cjpeg (Debian: libjpeg-turbo-progs).

Usage: samples/make-photos.py [OUTDIR]   (default samples/photos). The committed JPEGs were made
with it; the output is deterministic, so running it again gives the same pictures.
"""
import math
import os
import random
import subprocess
import sys

SCENES = [
    # name, width, height, sky top, sky horizon, hill colour, water, sun (x, y, r, colour)
    ("dawn-hills", 960, 640, (40, 60, 120), (250, 170, 120), (60, 90, 60), False, (0.7, 0.62, 40, (255, 230, 170))),
    ("noon-lake", 960, 640, (70, 130, 210), (190, 220, 245), (70, 120, 70), True, (0.25, 0.18, 30, (255, 250, 220))),
    ("dusk-ridge", 960, 640, (30, 20, 70), (240, 110, 80), (40, 40, 60), False, (0.5, 0.66, 55, (255, 150, 90))),
    ("night-bay", 960, 640, (5, 10, 30), (30, 50, 90), (15, 25, 30), True, (0.8, 0.2, 22, (235, 235, 220))),
    ("tall-pines", 640, 960, (90, 150, 220), (210, 230, 250), (30, 80, 50), False, (0.3, 0.15, 35, (255, 250, 230))),
    ("square-field", 800, 800, (100, 160, 230), (220, 235, 250), (150, 160, 60), False, (0.65, 0.2, 45, (255, 245, 200))),
]


def lerp(a, b, t):
    return tuple(int(a[i] + (b[i] - a[i]) * t) for i in range(3))


def draw(name, width, height, sky_top, sky_horizon, hill, water, sun, seed):
    rng = random.Random(seed)
    horizon = int(height * (0.62 if water else 0.7))
    sx, sy, sr, scolour = sun[0] * width, sun[1] * height, sun[2], sun[3]
    # Two ridges of hills: sums of sines with random phases.
    ridges = []
    for level, (amplitude, base) in enumerate([(0.08, 0.55), (0.06, 0.66)]):
        phases = [rng.uniform(0, 2 * math.pi) for _ in range(3)]
        line = []
        for x in range(width):
            u = x / width
            y = base + amplitude * (math.sin(2 * math.pi * u * 1.3 + phases[0]) * 0.6
                                    + math.sin(2 * math.pi * u * 3.1 + phases[1]) * 0.3
                                    + math.sin(2 * math.pi * u * 7.7 + phases[2]) * 0.1)
            line.append(int(y * height))
        ridges.append((line, lerp(hill, (0, 0, 0), 0.25 * level)))
    rows = bytearray()
    for y in range(height):
        for x in range(width):
            if water and y >= horizon:
                # Water: the sky mirrored, darker, with ripples.
                mirror = 2 * horizon - y
                t = max(0.0, min(1.0, mirror / horizon))
                colour = lerp(lerp(sky_top, sky_horizon, t), (10, 30, 50), 0.45)
                ripple = int(8 * math.sin(y * 0.9 + math.sin(x * 0.05) * 2))
                colour = tuple(max(0, min(255, c + ripple)) for c in colour)
            else:
                t = y / horizon if y < horizon else 1.0
                colour = lerp(sky_top, sky_horizon, t)
                d = math.hypot(x - sx, y - sy)
                if d < sr:
                    colour = scolour
                elif d < sr * 3:
                    colour = lerp(scolour, colour, (d - sr) / (sr * 2))
                for line, ridge_colour in ridges:
                    if y >= line[x] and (not water or y < horizon):
                        shade = (y - line[x]) / max(1, height - line[x])
                        colour = lerp(ridge_colour, (0, 0, 0), shade * 0.5)
            noise = rng.randint(-3, 3)
            rows += bytes(max(0, min(255, c + noise)) for c in colour)
    return b"P6\n%d %d\n255\n" % (width, height) + bytes(rows)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "photos")
    os.makedirs(out, exist_ok=True)
    for index, scene in enumerate(SCENES):
        ppm = draw(*scene, seed=index + 1)
        path = os.path.join(out, scene[0] + ".jpg")
        with open(path, "wb") as jpeg:
            subprocess.run(["cjpeg", "-quality", "85", "-optimize"], input=ppm, stdout=jpeg, check=True)
        print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
