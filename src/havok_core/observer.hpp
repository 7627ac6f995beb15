// Observation vector and action mask for one seat, written straight into caller-owned buffers.
// The layout (section offsets) is havok_env/observe.py's, handed over by the Python layer, so it
// is defined and documented in one place.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "engine.hpp"

namespace havok {

struct ObsLayout {
    int size = 0, seat_size = 0, n_havok = 0;
    int most_turns = 1;  // the turns a game can have (the turn feature's upper bound, at least 1)
    int most_cards_left = std::numeric_limits<int>::max();  // the cards a turn can have left to play
    int n_kinds = 0, n_treasures = 0, n_events = 0, n_dragons = 0;  // the card set it was made for
    // section -> offset ("hand", "seats", ..., "shown") and seat field -> offset within a slot
    std::map<std::string, int> offset, seat_offset;
    // the same, looked up once
    int hand, seats, discard, trash, past_events, canceled, havok_remaining, havok_size, hijinks_size,
        known_top, turn, decision_kind, purpose, ability, actor, target, trigger, trigger_card, picks, shown;
    int present, dragon, ready, innate_used, cards_used, cards_left, restricted, is_current, hand_size,
        score, hoard;
    void finish(const CardTables& cs);  // looks the offsets up and checks they fit in ``size``
};

// Writes seat ``seat``'s observation (CoreError if the game's card set has other sizes than the
// layout's) (``layout.size`` floats) and mask (``cards.n_actions``
// bytes); both buffers are overwritten entirely.
void observe(const Game& g, const ObsLayout& layout, int seat, float* obs, int8_t* mask);

}  // namespace havok
