#include "value_features.hpp"

#include <algorithm>

namespace havok {

namespace {
constexpr int MAX_BINS = 16, MAX_EVENTS = 64;  // the counters' sizes below
}

void ValueLayout::finish(const CardTables& cs) {
    auto get = [](const std::map<std::string, int>& m, const char* key) {
        auto it = m.find(key);
        if (it == m.end() || it->second < 0) throw CoreError(std::string("value feature layout lacks ") + key);
        return it->second;
    };
    worth = get(seat_offset, "worth"), ready = get(seat_offset, "ready"), hand_size = get(seat_offset, "size");
    hand = get(seat_offset, "hand"), dragon = get(seat_offset, "dragon"), bins = get(seat_offset, "bins");
    count = get(seat_offset, "count"), dist = get(seat_offset, "dist"), events = get(seat_offset, "events");
    in_use = get(seat_offset, "using"), stake = get(seat_offset, "stake"), random = get(seat_offset, "random");
    margin = get(seat_offset, "margin");
    players = get(offset, "players"), turn = get(offset, "turn"), havok_size = get(offset, "havok_size");
    top = get(offset, "top"), next = get(offset, "next"), unseen = get(offset, "unseen");
    hijinks_size = get(offset, "hijinks_size"), discard_size = get(offset, "discard_size");
    trash = get(offset, "trash"), canceled = get(offset, "canceled");
    n_kinds = cs.n_kinds, n_treasures = cs.n_treasures, n_events = cs.n_events;
    n_dragons = static_cast<int>(cs.dragons.size());
    const int nh = cs.n_hijinks, ne = cs.n_events, P = seat_size, G = glob_size;
    // every slot written must lie inside its block, and the blocks inside the row
    bool ok = worth_bins > 0 && worth_bins <= MAX_BINS && ne <= MAX_EVENTS && P > 0 && G > 0 &&
              size == MAX_PLAYERS * P + G;
    ok = ok && worth + 3 <= P && ready + 4 <= P && hand_size < P && hand + nh <= P && dragon + n_dragons <= P &&
         bins + worth_bins <= P && count < P && dist + MAX_PLAYERS <= P && events + ne <= P &&
         in_use + nh + 2 <= P && stake < P && random < P && margin + 2 <= P;
    ok = ok && players + MAX_PLAYERS - 1 <= G && turn < G && havok_size < G && top + 3 + ne <= G &&
         next + 3 * (N_OPTIONS - 1) <= G && unseen + 2 + ne + worth_bins <= G && hijinks_size < G &&
         discard_size < G && trash + 3 <= G && canceled < G;
    if (!ok) throw CoreError("the value feature layout does not fit the card set");
}

namespace {

// x / d in double precision, stored as a float: the arithmetic of the numpy encoding this one
// replaced (for a float x that is also float division, correctly rounded)
inline float ratio(double x, double d) { return static_cast<float>(x / d); }

int seat_of(int q, int n) {
    if (q < 0 || q >= n)
        throw CoreError("value features: seat " + std::to_string(q) + " is not a seat of the game");
    return q;
}

int kind_of(int k, int lo, int hi, const char* where) {
    if (k < lo || k >= hi)
        throw CoreError(std::string("value features: ") + where + " holds card kind " + std::to_string(k));
    return k;
}

// What the stack says is on its way, written into each seat's block of ``row`` (row 0: seat q's
// block at q * seat_size): the events on their way to it, the abilities it is using and its
// treasures a pending steal, break or trade has picked; and the worth of the treasures on their
// way to each seat, added to ``flying``. A Havok card in play with no frame yet (just flipped) is
// on its way to the seat its flip is for.
void in_flight(const CardTables& cs, const ValueLayout& L, const State& s, float* row, double* flying) {
    const int n = s.n, P = L.seat_size, nt = cs.n_treasures, fe = cs.first_event, fh = cs.first_hijinks;
    auto arrive = [&](int to, int k) {
        if (k < nt)
            flying[to] += cs.worth[s.dragons[to]][k];
        else
            row[to * P + L.events + k - fe] += 1;
    };
    Cards framed;  // the Havok cards the stack's frames hold
    int stake[MAX_PLAYERS] = {};
    for (const Frame& fr : s.stack) {
        if (fr.f == F_HAVOK) {
            const int k = kind_of(fr.card, 0, fh, "a Havok frame");
            framed.push_back(k);
            if (k < nt)
                arrive(seat_of(fr.to != ABSENT ? fr.to : fr.you, n), k);
            else if (!fr.nullified)
                arrive(seat_of(fr.you, n), k);
        } else if (fr.f == F_USE && !fr.canceled) {
            int i;
            if (cs.is_innate(fr.ability))
                i = cs.n_hijinks + (fr.ability - cs.n_kinds) % 2;  // a dragon's play or crash
            else
                i = kind_of(fr.ability, fh, cs.n_kinds, "a frame in use") - fh;
            row[seat_of(fr.user, n) * P + L.in_use + i] += 1;
            if (fr.t.victim >= 0 && !fr.t.picks.empty()) {
                const int v = seat_of(fr.t.victim, n);
                const Cards& h = s.hoards[v];
                for (int k : fr.t.picks) stake[v] += std::find(h.begin(), h.end(), k) != h.end();
            }
        }
    }
    for (int q = 0; q < n; ++q) row[q * P + L.stake] = ratio(stake[q], 2);
    if (s.current < 0) return;
    const Frame& top = s.stack.back();
    const int to = top.f == F_HAVOK || top.f == F_USE ? top.you : s.current;
    for (int k : s.in_play) {
        if (k >= fh) continue;
        kind_of(k, 0, fh, "in play");
        auto it = std::find(framed.begin(), framed.end(), k);
        if (it != framed.end())
            framed.erase(it);
        else
            arrive(seat_of(to, n), k);
    }
}

}  // namespace

void value_features(const CardTables& cs, const ValueLayout& L, const State& s, int top, unsigned random_seats,
                    float* rows) {
    if (cs.n_kinds != L.n_kinds || cs.n_treasures != L.n_treasures || cs.n_events != L.n_events ||
        static_cast<int>(cs.dragons.size()) != L.n_dragons)
        throw CoreError("the value feature layout is for another card set");
    const int n = s.n;
    if (n < 2 || n > MAX_PLAYERS || static_cast<int>(s.dragons.size()) != n)
        throw CoreError("value features are for games of 2 to " + std::to_string(MAX_PLAYERS) + " players");
    if (top < 0 || top > static_cast<int>(s.havok.size()))
        throw CoreError("value features: top_seen must lie between 0 and the Havok deck's size");
    if (random_seats >> n) throw CoreError("value features: a random seat is not a seat of the game");
    const int P = L.seat_size, nt = cs.n_treasures, fe = cs.first_event, fh = cs.first_hijinks;
    const int ne = cs.n_events, nh = cs.n_hijinks, B = L.worth_bins;
    std::fill(rows, rows + n * L.size, 0.0f);
    // row 0 holds seat q's block at q * P, as seat 0 sees the table; the other rows are rotations
    float* row = rows;
    float* g = rows + MAX_PLAYERS * P;
    for (int q = 0; q < n; ++q) {
        float* b = row + q * P;
        const int d = s.dragons[q];
        if (d < 0 || d >= L.n_dragons) throw CoreError("value features: no such dragon");
        b[L.ready] = s.ready[q];
        b[L.ready + 1] = s.innate_used[q];
        const int left = s.restricted[q] ? 0 : s.card_limit[q] - s.cards_used[q];
        b[L.ready + 2] = ratio(std::min(std::max(left, 0), 2), 2);
        b[L.ready + 3] = s.restricted[q];
        b[L.dragon + d] = 1;
        b[L.count] = ratio(static_cast<double>(s.hoards[q].size()), 8);
        if (s.current >= 0) b[L.dist + ((q - s.current) % n + n) % n] = 1;
        for (int k : s.hands[q]) b[L.hand + kind_of(k, fh, cs.n_kinds, "a hand") - fh] += 1;
        if (random_seats >> q & 1) b[L.random] = 1;
    }
    for (const auto& [owner, k] : s.canceled)  // back in its owner's hand at the end of the turn
        row[seat_of(owner, n) * P + L.hand + kind_of(k, fh, cs.n_kinds, "canceled") - fh] += 1;
    double flying[MAX_PLAYERS] = {};
    if (!s.stack.empty()) in_flight(cs, L, s, row, flying);
    // hoards: worth, with what is on its way, and treasures by worth
    double projected[MAX_PLAYERS];
    for (int q = 0; q < n; ++q) {
        float* b = row + q * P;
        double cards = 0, total = 0;
        for (int i = 0; i < nh; ++i) cards += b[L.hand + i];
        b[L.hand_size] = ratio(cards, 5);
        int by_worth[MAX_BINS] = {};
        for (int k : s.hoards[q]) {
            const int w = cs.worth[s.dragons[q]][kind_of(k, 0, nt, "a hoard")];
            total += w;
            by_worth[std::min(std::max(w, 1), B) - 1] += 1;
        }
        for (int i = 0; i < B; ++i) b[L.bins + i] = ratio(by_worth[i], 3);
        projected[q] = total + flying[q];
        b[L.worth] = ratio(total, 15);
        b[L.worth + 1] = ratio(projected[q], 15);
        b[L.worth + 2] = ratio(flying[q], 5);
    }
    for (int q = 0; q < n; ++q) {  // the margin over the best other seat, and whether it is the best
        double others = -1e300;
        for (int r = 0; r < n; ++r)
            if (r != q) others = std::max(others, projected[r]);
        row[q * P + L.margin] = ratio(projected[q] - others, 15);
        row[q * P + L.margin + 1] = projected[q] >= others;
    }
    // the table: player count, turn, Havok deck size and its seen top
    const Cards& havok = s.havok;
    g[L.players + n - 2] = 1;
    g[L.turn] = ratio(s.turn, 20);
    g[L.havok_size] = ratio(static_cast<double>(havok.size()), 40);
    for (int k : havok) kind_of(k, 0, fh, "the Havok deck");
    if (top >= 1) {  // the first card in full
        const int k = havok[0];
        g[L.top] = 1;
        if (k < nt) {
            g[L.top + 1] = 1;
            g[L.top + 2] = ratio(cs.value[k], 5);
        } else {
            g[L.top + 3 + k - fe] = 1;
        }
    }
    for (int m = 1; m < N_OPTIONS && m < top; ++m) {  // the next ones as value and event
        const int k = havok[m], j = L.next + 3 * (m - 1);
        g[j] = 1;
        if (k < nt)
            g[j + 1] = ratio(cs.value[k], 5);
        else
            g[j + 2] = 1;
    }
    // the unseen Havok cards: treasures, their value, each event left, treasures by value. Each sum
    // is of float32 terms of a few magnitudes, exact in double whatever its order, then rounded once.
    double treasures = 0, value = 0;
    int events[MAX_EVENTS] = {}, by_value[MAX_BINS] = {};
    for (size_t i = static_cast<size_t>(top); i < havok.size(); ++i) {
        const int k = havok[i];
        if (k < nt) {
            treasures += static_cast<float>(1.0 / 30);
            value += static_cast<float>(cs.value[k] / 76.0);
            by_value[std::min(std::max(cs.value[k], 1), B) - 1] += 1;
        } else {
            events[k - fe] += 1;
        }
    }
    g[L.unseen] = static_cast<float>(treasures);
    g[L.unseen + 1] = static_cast<float>(value);
    for (int e = 0; e < ne; ++e) g[L.unseen + 2 + e] = std::min(events[e], 1);
    for (int i = 0; i < B; ++i) g[L.unseen + 2 + ne + i] = ratio(by_value[i], 8);
    // the piles
    g[L.hijinks_size] = ratio(static_cast<double>(s.hijinks.size()), 40);
    g[L.discard_size] = ratio(static_cast<double>(s.discard.size()), 40);
    if (!s.trash.empty()) {
        int best = 0, sum = 0;
        for (int k : s.trash) {
            const int v = cs.value[kind_of(k, 0, cs.n_kinds, "the trash")];
            best = std::max(best, v), sum += v;
        }
        g[L.trash] = ratio(static_cast<double>(s.trash.size()), 10);
        g[L.trash + 1] = ratio(best, 5);
        g[L.trash + 2] = ratio(sum, 20);
    }
    g[L.canceled] = ratio(static_cast<double>(s.canceled.size()), 2);
    // each seat's row: its own block first, then the others in turn order, then the table
    for (int i = 1; i < n; ++i) {
        float* r = rows + i * L.size;
        for (int j = 0; j < n; ++j) std::copy(row + ((i + j) % n) * P, row + ((i + j) % n + 1) * P, r + j * P);
        std::copy(g, g + L.glob_size, r + MAX_PLAYERS * P);
    }
}

}  // namespace havok
