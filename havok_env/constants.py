"""The game's fixed numbers from the rulebook: how many play, the hand size, the winning
score and how many cards one look shows; and the words for why a game ended, and the seeds a game
takes (the engine and its snapshots both read them).

They live here, below everything else, because the card loader checks a card set against them (it
must seat and deal to the most players) as well as the engine playing by them; the engine exports
them too (``engine.WIN_SCORE``). Each use elsewhere reads them, so changing one changes it
everywhere (observations scale scores by ``WIN_SCORE``: a change there is a new environment
version, ``havok_env/version.py``).
"""

MIN_PLAYERS = 2
MAX_PLAYERS = 4
#: The player counts in words, for messages: "2, 3 or 4".
PLAYER_COUNTS = ", ".join(map(str, range(MIN_PLAYERS, MAX_PLAYERS))) + f" or {MAX_PLAYERS}"
HAND_SIZE = 3
WIN_SCORE = 15
#: The action space's option block: the most cards one look at the Havok deck shows (Foresight's
#: ``n``, a flip's ``choose_from``), and so the most a seat can know on top of it.
N_OPTIONS = 3


#: Why a game ended (``result["reason"]``, as the engine sets it), in words for people.
END_REASONS = {"hoard_15": f"a hoard reached {WIN_SCORE}", "havok_empty": "the Havok deck ran out"}
#: The seeds a game takes: exactly those its snapshot can hold, signed or unsigned 64-bit
#: integers. The generator starts from the seed modulo 2**64, so seed -1 deals the game of
#: seed 2**64 - 1; a seed outside the range would be saved as one no snapshot restores.
SEED_MIN, SEED_MAX = -(1 << 63), (1 << 64) - 1


def is_player_count(n) -> bool:
    """Whether ``n`` is a number of players the game allows (an int, not a bool)."""
    return isinstance(n, int) and not isinstance(n, bool) and MIN_PLAYERS <= n <= MAX_PLAYERS
