#include "observer.hpp"

#include <algorithm>
#include <cstring>

namespace havok {

void ObsLayout::finish(const CardTables& cs) {
    auto get = [](const std::map<std::string, int>& m, const char* key) {
        auto it = m.find(key);
        if (it == m.end() || it->second < 0) throw CoreError(std::string("observation layout lacks ") + key);
        return it->second;
    };
    hand = get(offset, "hand"), seats = get(offset, "seats"), discard = get(offset, "discard");
    trash = get(offset, "trash"), past_events = get(offset, "past_events"), canceled = get(offset, "canceled");
    havok_remaining = get(offset, "havok_remaining"), havok_size = get(offset, "havok_size");
    hijinks_size = get(offset, "hijinks_size"), known_top = get(offset, "known_top"), turn = get(offset, "turn");
    decision_kind = get(offset, "decision_kind"), purpose = get(offset, "purpose"), ability = get(offset, "ability");
    actor = get(offset, "actor"), target = get(offset, "target"), trigger = get(offset, "trigger");
    trigger_card = get(offset, "trigger_card"), picks = get(offset, "picks"), shown = get(offset, "shown");
    present = get(seat_offset, "present"), dragon = get(seat_offset, "dragon"), ready = get(seat_offset, "ready");
    innate_used = get(seat_offset, "innate_used"), cards_used = get(seat_offset, "cards_used");
    cards_left = get(seat_offset, "cards_left"), restricted = get(seat_offset, "restricted");
    is_current = get(seat_offset, "is_current"), hand_size = get(seat_offset, "hand_size");
    score = get(seat_offset, "score"), hoard = get(seat_offset, "hoard");
    n_havok = cs.n_treasures + cs.n_events;
    n_kinds = cs.n_kinds, n_treasures = cs.n_treasures, n_events = cs.n_events;
    n_dragons = static_cast<int>(cs.dragons.size());
    const int nd = static_cast<int>(cs.dragons.size());
    const int n_abilities = cs.n_hijinks + cs.n_events + 2 * nd;
    // every slot written must lie inside the vector
    bool ok = seats + MAX_PLAYERS * seat_size <= size && hoard + cs.n_treasures <= seat_size &&
              dragon + nd <= seat_size && hand + cs.n_hijinks <= size && discard + cs.n_hijinks <= size &&
              trash + cs.n_treasures <= size && past_events + cs.n_events <= size &&
              canceled + cs.n_hijinks <= size && havok_remaining + n_havok <= size &&
              known_top + N_OPTIONS * n_havok <= size && decision_kind + 6 <= size && purpose + N_PURPOSES <= size &&
              ability + n_abilities <= size && actor + MAX_PLAYERS <= size && target + MAX_PLAYERS <= size &&
              trigger + 3 <= size && trigger_card + n_havok <= size && picks + cs.n_treasures <= size &&
              shown + N_OPTIONS * n_havok <= size && havok_size < size && hijinks_size < size && turn < size;
    for (const char* f : {"present", "ready", "innate_used", "cards_used", "cards_left", "restricted",
                          "is_current", "hand_size", "score"})
        ok = ok && seat_offset.at(f) < seat_size;
    if (!ok) throw CoreError("the observation layout does not fit the card set");
}

// ``p`` as a seat relative to ``seat`` (0 = itself, 1 = its left, ...), without a division
static inline int relative(int p, int seat, int n) {
    const int r = p - seat + n;  // (p and seat are seats: 0 <= r < 2n)
    return r < n ? r : r >= 2 * n ? r % n : r - n;
}

// x / d in double precision, stored as a float (the Python observer's arithmetic), for small x
// read from a table made once (the division was a tenth of the observation's time)
template <int D, int N>
struct Fractions {
    float table[N];
    Fractions() {
        for (int x = 0; x < N; ++x) table[x] = static_cast<float>(x / static_cast<double>(D));
    }
    float operator()(long x) const {
        return x >= 0 && x < N ? table[x] : static_cast<float>(x / static_cast<double>(D));
    }
};
static const Fractions<HAND_SIZE, 64> of_hand;
static const Fractions<WIN_SCORE, 128> of_win;
static const Fractions<40, 256> of_forty;

static int ability_index(const CardTables& cs, int ref) {
    if (cs.is_hijinks(ref)) return ref - cs.first_hijinks;
    if (cs.is_event(ref)) return cs.n_hijinks + ref - cs.first_event;
    return cs.n_hijinks + cs.n_events + (ref - cs.n_kinds);  // 2 * dragon + crash
}

void observe(const Game& g, const ObsLayout& L, int seat, float* obs, int8_t* mask) {
    const CardTables& cs = g.cards();
    const State& s = g.state();
    const int n = s.n;
    if (cs.n_kinds != L.n_kinds || cs.n_treasures != L.n_treasures || cs.n_events != L.n_events ||
        static_cast<int>(cs.dragons.size()) != L.n_dragons)
        throw CoreError("the observation layout is for another card set");
    std::fill(obs, obs + L.size, 0.0f);
    std::memset(mask, 0, cs.n_actions);
    const int fh = cs.first_hijinks;
    for (int k : s.hands[seat]) obs[L.hand + k - fh] += 1;
    for (int p = 0; p < n; ++p) {
        const int r = relative(p, seat, n);
        float* b = obs + L.seats + r * L.seat_size;
        b[L.present] = 1;
        b[L.dragon + s.dragons[p]] = 1;
        b[L.ready] = s.ready[p];
        b[L.innate_used] = s.innate_used[p];
        b[L.cards_used] = static_cast<float>(s.cards_used[p]);
        const int lim = s.card_limit[p], used = s.cards_used[p];
        // (play leaves one card at most where only Hijinks cards grant extra plays: a restored
        // position allowing more reads as that bound, as the observation space declares)
        const int left = lim > used && !s.restricted[p] ? lim - used : 0;
        b[L.cards_left] = static_cast<float>(std::min(left, L.most_cards_left));
        b[L.restricted] = s.restricted[p];
        b[L.is_current] = p == s.current;
        // the Python observer divides in double precision, then stores a float32
        b[L.hand_size] = of_hand(static_cast<long>(s.hands[p].size()));
        // the hoard's counts and its worth (Game::score) in one pass
        const std::vector<int>& worth = cs.worth[s.dragons[p]];
        int score = 0;
        for (int k : s.hoards[p]) b[L.hoard + k] += 1, score += worth[k];
        b[L.score] = of_win(score);
    }
    for (int k : s.discard) obs[L.discard + k - fh] += 1;
    for (int k : s.trash) obs[L.trash + k] += 1;
    for (int k : s.past_events) obs[L.past_events + k - cs.first_event] += 1;
    for (const auto& c : s.canceled) obs[L.canceled + c.second - fh] += 1;
    for (int k : s.havok) obs[L.havok_remaining + k] += 1;
    obs[L.havok_size] = of_forty(static_cast<long>(s.havok.size()));
    obs[L.hijinks_size] = of_forty(static_cast<long>(s.hijinks.size()));
    // (play keeps the turn within the observation space's bounds; a position restored with a
    // count no game reaches, or one before its first turn, reads as the nearest bound)
    obs[L.turn] = of_forty(std::clamp(s.turn, 1, L.most_turns));
    const Cards& known = s.known[seat];
    for (size_t i = 0; i < known.size() && i < static_cast<size_t>(N_OPTIONS); ++i) obs[L.known_top + i * L.n_havok + known[i]] = 1;
    if (!s.has_pending || s.pending.player != seat) return;
    const Pending& p = s.pending;
    obs[L.decision_kind + p.kind] += 1;
    obs[L.purpose + p.purpose] += 1;
    const Context& ctx = p.context;
    int actor = ABSENT, target = ABSENT;
    const Cards* picks = nullptr;
    if (ctx.has_trigger) {
        const Trigger& t = ctx.trigger;
        obs[L.trigger + t.on] += 1;
        if (t.on == ON_USE) {
            obs[L.ability + ability_index(cs, t.ability)] += 1;
            picks = &t.picks;
        } else {
            obs[L.trigger_card + t.card] += 1;
        }
        actor = t.who;
        if (!t.owners.empty()) target = t.owners[0];
    } else {
        if (ctx.ability != ABSENT) obs[L.ability + ability_index(cs, ctx.ability)] += 1;
        actor = ctx.actor, target = ctx.target;
        if (ctx.has_picks) picks = &ctx.picks;
        for (size_t i = 0; i < ctx.shown.size() && i < static_cast<size_t>(N_OPTIONS); ++i) obs[L.shown + i * L.n_havok + ctx.shown[i]] += 1;
    }
    if (actor >= 0) obs[L.actor + relative(actor, seat, n)] += 1;
    if (target >= 0) obs[L.target + relative(target, seat, n)] += 1;
    if (picks)
        for (int k : *picks) obs[L.picks + k] += 1;
    for (int a : p.choices)
        if (a >= 0 && a < cs.n_actions) mask[a] = 1;
}

}  // namespace havok
