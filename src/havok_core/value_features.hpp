// The luck correction's value features: one row per seat of a state, seen from that seat, written
// straight into a caller-owned buffer (agents/value.py documents what they read). The
// positions are agents/value.py's layout, handed over by the Python layer, so they are defined
// and documented in one place; the encoding itself (what goes where, and its scales) is here.
#pragma once
#include <map>
#include <string>

#include "state.hpp"

namespace havok {

struct ValueLayout {
    int size = 0, seat_size = 0, glob_size = 0, worth_bins = 0;
    int n_kinds = 0, n_treasures = 0, n_events = 0, n_dragons = 0;  // the card set it was made for
    // seat field -> offset within a seat's block, and table field -> offset within the table's
    // block (which follows MAX_PLAYERS seat blocks)
    std::map<std::string, int> seat_offset, offset;
    // the same, looked up once
    int worth, ready, hand_size, hand, dragon, bins, count, dist, events, in_use, stake, random, margin;
    int players, turn, havok_size, top, next, unseen, hijinks_size, discard_size, trash, canceled;
    void finish(const CardTables& cs);  // looks the offsets up and checks they fit
};

// Writes the rows of state ``s`` (``s.n * layout.size`` floats, overwritten entirely): ``top`` is
// how many cards on the top of the Havok deck somebody has seen, ``random_seats`` a bit per seat
// played by the uniformly random bot. Only the fields the features read need be set (of the
// stack's frames: the kind, card, you, to, nullified, user, ability, canceled and the targets'
// victim and picks). CoreError for a state the features cannot read (a card of the wrong kind in
// a pile, a seat out of range).
void value_features(const CardTables& cs, const ValueLayout& layout, const State& s, int top,
                    unsigned random_seats, float* rows);

}  // namespace havok
