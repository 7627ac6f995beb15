// SeatView.determinize (see determinize.hpp). Every draw is made in the order the former Python
// implementation made it (tests/data/determinize.json holds worlds and generator states it dealt).
#include "determinize.hpp"

#include <algorithm>

namespace havok {

PyRandom::PyRandom(const std::vector<long long>& state) {
    if (state.size() != 625 || state[624] < 0 || state[624] > 624) throw CoreError("not a random.Random state");
    for (int i = 0; i < 624; ++i) {
        if (state[i] < 0 || state[i] > 0xffffffffLL) throw CoreError("not a random.Random state");
        mt[i] = static_cast<uint32_t>(state[i]);
    }
    index = static_cast<int>(state[624]);
}

uint32_t PyRandom::next() {
    if (index >= 624) {
        auto mix = [](uint32_t a, uint32_t b) { return (a & 0x80000000U) | (b & 0x7fffffffU); };
        for (int k = 0; k < 624; ++k) {
            uint32_t y = mix(mt[k], mt[(k + 1) % 624]);
            mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1U) ? 0x9908b0dfU : 0U);
        }
        index = 0;
    }
    uint32_t y = mt[index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

int PyRandom::below(int k) {
    int bits = 0;  // k.bit_length()
    while ((k >> bits) != 0) ++bits;
    uint32_t r;
    do r = next() >> (32 - bits);  // getrandbits(bits), rejected until below k
    while (r >= static_cast<uint32_t>(k));
    return static_cast<int>(r);
}

uint64_t PyRandom::bits64() {
    const uint64_t low = next();
    return low | static_cast<uint64_t>(next()) << 32;
}

void PyRandom::shuffle(std::vector<int>& x) {
    for (int i = static_cast<int>(x.size()) - 1; i > 0; --i) std::swap(x[i], x[below(i + 1)]);
}

void determinize(Game& g, int me, PyRandom& rng) {
    State& s = g.state_mut();
    const int n = s.n;
    if (me < 0 || me >= n) throw CoreError("no such seat");
    // Others' hands and the Hijinks deck: pooled, sorted (so that the sample does not depend on
    // where the hidden cards are), shuffled and dealt back in the same sizes.
    Cards pool = s.hijinks;
    for (int q = 0; q < n; ++q)
        if (q != me) pool.insert(pool.end(), s.hands[q].begin(), s.hands[q].end());
    std::sort(pool.begin(), pool.end());
    rng.shuffle(pool);
    size_t at = 0;
    for (int q = 0; q < n; ++q) {
        if (q == me) continue;
        const size_t size = s.hands[q].size();
        s.hands[q].assign(pool.begin() + at, pool.begin() + at + size);
        at += size;
    }
    s.hijinks.assign(pool.begin() + at, pool.end());
    // The Havok deck below what this seat has seen on top; others know its new top.
    const size_t k = std::min(s.known[me].size(), s.havok.size());
    std::sort(s.havok.begin() + k, s.havok.end());
    Cards rest(s.havok.begin() + k, s.havok.end());
    rng.shuffle(rest);
    std::copy(rest.begin(), rest.end(), s.havok.begin() + k);
    for (int q = 0; q < n; ++q)
        if (q != me) s.known[q].assign(s.havok.begin(), s.havok.begin() + std::min(s.known[q].size(), s.havok.size()));
    s.rng = rng.bits64();
    // The stack is edited in place: the seats still to be asked are re-derived (crash_choices) on
    // the sampled hands, and crash_choices reads no frame's declarations, crash order or hidden
    // choices, only the flipped card of an event window.
    const CardTables& cs = g.cards();
    for (Frame& fr : s.stack) {
        if (fr.f == F_WINDOW) {
            // Others' declarations are hidden until the window closes, and so is which seats
            // could crash.
            fr.decl.erase(std::remove_if(fr.decl.begin(), fr.decl.end(), [&](const auto& d) { return d.first != me; }),
                          fr.decl.end());
            if (fr.has_order) {
                // order[:i + 1], as Python slices it
                const long len = static_cast<long>(fr.order.size());
                long m = static_cast<long>(fr.i) + 1;
                m = m < 0 ? std::max(0L, len + m) : std::min(m, len);
                fr.order.resize(static_cast<size_t>(m));
                int from = 0;  // the position in turn order after the last seat asked
                if (m > 0) {
                    const int last = fr.order.back().first;
                    if (last < 0 || last >= n) throw CoreError("bad crash window");
                    from = (last - s.current + n) % n + 1;
                }
                if (fr.trig.frame < 0 || fr.trig.frame >= static_cast<int>(s.stack.size()))
                    throw CoreError("no such frame");
                for (int i = from; i < n; ++i) {
                    const int q = (s.current + i) % n;
                    CrashOrder::Entry& e = fr.order.next();
                    g.crash_choices(q, fr.trig, e.second);
                    if (!e.second.empty()) e.first = q, fr.order.push();
                }
            }
        }
        // Tidal Shift choices are hidden until everyone has chosen (the scratch space a use, or
        // a flipped event resolving, keeps)
        const bool scratch = fr.f == F_USE || (fr.f == F_HAVOK && fr.step == 2 && !cs.is_treasure(fr.card));
        if (scratch && fr.o.has_chosen) {
            for (auto& [p, kind] : fr.o.chosen) {
                if (p == me) continue;
                if (p < 0 || p >= n) throw CoreError("bad passed treasure");
                const Cards kinds = distinct(s.hoards[p]);  // sorted(set(hoard)), then random.Random.choice
                if (kinds.empty()) throw CoreError("a seat passing a treasure has none");
                kind = kinds[static_cast<size_t>(rng.below(static_cast<int>(kinds.size())))];
            }
        }
    }
}

}  // namespace havok
