// Determinization for search (havok_env.view.SeatView.determinize is this): a full game that
// agrees with everything one seat knows, the hidden rest sampled with Python's random.Random, so
// that a seeded search draws the very numbers, and deals the very worlds, it always did.
#pragma once
#include <cstdint>
#include <vector>

#include "engine.hpp"
#include "heuristic.hpp"

namespace havok {

// Python's random.Random (MT19937 and CPython's genrand_uint32, getrandbits, _randbelow, shuffle
// and choice), run on a state taken from random.Random.getstate(): the 624 words and the index.
struct PyRandom : RandomDraw {
    uint32_t mt[624];
    int index = 624;
    explicit PyRandom(const std::vector<long long>& state);  // CoreError if it is not such a state
    uint32_t next();                       // genrand_uint32
    int below(int k) override;             // _randbelow(k), k >= 1 (randrange(k))
    uint64_t bits64();                     // getrandbits(64): the first word drawn is the low one
    void shuffle(std::vector<int>& x);     // random.Random.shuffle
};

// Resamples in place everything in ``g`` that seat ``me`` cannot see (the docstring of
// SeatView.determinize), reading only what the seat may know for what it keeps.
void determinize(Game& g, int me, PyRandom& rng);

}  // namespace havok
