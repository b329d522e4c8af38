"""ALE's grayscale palette: the luminance ``getScreenGrayscale`` gives each palette index.

Why: ALE converts a screen to grayscale pixel by pixel through its palette in a scalar loop
(about 14 us a 210x160 screen), while the palette-index screen, ``getScreen``, is a copy (under
1 us). With this table the standard observation (:mod:`arcadebench.wrappers.observations`)
reads the index screens and looks up only the rows that changed, with the same bytes as a result.

What ALE computes (ALE 0.12 ``src/ale/common/ColourPalette.cpp``, ``applyPaletteGrayscale``):
index ``i`` becomes the low byte of entry ``i + 1`` of the console's palette (``Palettes.hpp``;
NTSC or PAL, by the display format ALE detects for the ROM). Even entries are the 128 colours
and each odd entry holds the colour before it as gray, ``round(0.2989 R + 0.5870 G + 0.1140 B)``
(``convertGrayscale``), so an even index (a colour) gets its luminance and an odd index (PAL
games show them: Stella's colour loss) the blue byte of the next colour; index 255 reads one
entry past ALE's PAL table, where ale-py 0.12 gives 0. The tables below are those 256 values,
computed from ALE's palettes with that formula; tests/wrappers/test_observations.py checks them
against ``getScreenGrayscale`` on every ROM ale-py ships (all 128 colours of each format and the
odd indices the PAL games show).

Functions: grayscale_table.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PAL_GAMES", "grayscale_table"]

# ale-py's ROMs that ALE runs with its PAL palette (its log: "Display Format: AUTO-DETECT ==>
# PAL"; combat and maze_craze do not load in ale-py 0.12); every other ROM is NTSC
PAL_GAMES = frozenset(
    {
        "adventure",
        "air_raid",
        "combat",
        "keystone_kapers",
        "king_kong",
        "klax",
        "laser_gates",
        "maze_craze",
        "mr_do",
        "pacman",
        "sir_lancelot",
        "space_war",
    }
)

_NTSC = bytes.fromhex(
    "004a4a6f6f8e8eaaaac0c0d6d6ecec00400f5f1d7a2a9435ac40c14ad654e900"
    "3f1157216e30833d964aa755b860c7003b1555286b3a814a9459a767b774c700"
    "2c1a44325a486e5c806f9280a190b064337a4a8f5fa273b384c395d2a4e0b284"
    "279a3fad55c06bd07de08fee9ffcae9016a331b549c660d574e388f099fca994"
    "11a729b840c855d668e479f089fc9988209d3cb055c26dd282e196efa8fcba64"
    "288045985fb078c58dd9a2ebb6fcc8302b4e4a6965827f9997aeadc2c1d4d400"
    "281a473262487c5c936fa980bd90cf0029184a2d684284549d65b575cb84df00"
    "2f164f2b6b3e854f9d5fb36ec87cdc002f144f266b3885479d56b363c870dc00"
)
_PAL = bytes.fromhex(
    "002b2b525276769797b6b6d2d2ecec00002b2b525276769797b6b6d2d2ecec00"
    "5a1a723288489d5caf6fc080d090df004a1a66327f48975cac6fc080d390e400"
    "401a5b3274488c5ca16fb580c790d8143d355952726e89879f9eb3b4c5c8d614"
    "24353e52576e6d87819e95b4a6c8b75c40765a8e72a488b89ccbafdcc0ecd05c"
    "2c7444895a9e6eb081c192d1a2e0b17030894ca065b67cc992dca5ecb8fcc970"
    "278940a057b66cc97fdc91eca1fcb17020893ca055b66dc983dc97eca9fcbb80"
    "1e9636ab4dbe62cf75df87ee97fca688109d29b040c256d269e17cef8dfc9c00"
    "002b2b525276769797b6b6d2d2ecec00002b2b525276769797b6b6d2d2ecec00"
)


def grayscale_table(game: str) -> np.ndarray:
    """The 256-entry palette-index -> gray table ALE uses for ``game`` (an ale-py game id).

    Example:
        >>> table = grayscale_table("pong")
        >>> table.shape, table.dtype, int(table[2]), int(grayscale_table("air_raid")[2])
        ((256,), dtype('uint8'), 74, 43)
    """
    # a fresh, writable table: the array of a new bytearray
    return np.frombuffer(bytearray(_PAL if game in PAL_GAMES else _NTSC), np.uint8)
