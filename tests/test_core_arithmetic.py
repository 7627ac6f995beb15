"""The core's remainder without a division (``mod_below``, its shuffles' and random choices'
arithmetic) gives what ``%`` gives, for every divisor of its table and past it."""

import random

import pytest

from havok_env import _core

EDGES = [0, 1, 2, 255, 256, 257, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]


@pytest.mark.parametrize("d", range(1, 300))
def test_the_remainder_is_the_operators(d):
    rng = random.Random(d)
    xs = EDGES + [rng.getrandbits(64) for _ in range(300)] + [d * rng.getrandbits(55) + r for r in (0, d - 1)]
    assert [_core.mod_below(x, d) for x in xs] == [x % d for x in xs]


def test_multiples_and_their_neighbours_past_the_quotient_estimate():
    # the estimate of x // d is the quotient or one less: the remainders next to a multiple of d
    # are where a wrong correction would show
    for d in (3, 7, 10, 37, 44, 100, 255, 256, 1000, 2**31 + 1):
        for q in (1, 2**20, 2**40, (2**64 - 1) // d):
            for x in (q * d - 1, q * d, q * d + 1):
                if 0 <= x < 2**64:
                    assert _core.mod_below(x, d) == x % d


def test_a_zero_divisor_is_refused():
    with pytest.raises(ValueError, match="positive"):
        _core.mod_below(5, 0)
