#include "cards.hpp"

#include <algorithm>

namespace havok {

const char* const OP_NAMES[N_OPS] = {
    "steal", "break", "trade", "salvage", "pass_left", "draw", "discard_hand", "flip",
    "foresight", "recall", "extra_play", "tire", "ready", "restrict", "break_lowest_all",
    "tribute", "treasure_map", "cancel", "nullify", "redirect_event", "redirect_treasure",
    "divert_break", "swap_target"};

const char* const TYPE_NAMES[N_TYPES] = {
    "steal", "break", "trade", "salvage", "havok", "draw", "foresight", "pass", "recall",
    "nullify", "cancel", "defend"};

void fail(const char* what) { throw CoreError(what); }

static void require(bool ok, const std::string& what) {
    if (!ok) throw CoreError("card tables: " + what);
}

void CardTables::finish() {
    require(n_treasures > 0 && n_events >= 0 && n_hijinks > 0, "empty card set");
    n_kinds = n_treasures + n_events + n_hijinks;
    require(n_kinds < (1 << 16), "too many card kinds");
    first_event = n_treasures;
    first_hijinks = n_treasures + n_events;
    require(static_cast<int>(names.size()) == n_kinds && static_cast<int>(copies.size()) == n_kinds &&
                static_cast<int>(value.size()) == n_kinds && static_cast<int>(affinity.size()) == n_kinds,
            "names, copies and values need one entry per card kind");
    require(dragons.size() >= MAX_PLAYERS && dragons.size() < 64, "4 to 63 dragons are needed");
    require(static_cast<int>(abilities.size()) == n_refs(), "one ability slot per card kind and innate");
    require(is_treasure(starting_treasure) && copies[starting_treasure] >= MAX_PLAYERS,
            "the starting treasure needs 4 copies");
    havok_deck.clear(), hijinks_deck.clear();
    for (int k = 0; k < n_kinds; ++k) {
        require(copies[k] >= 1 && copies[k] <= 1000, "copies must be 1 to 1000");
        require(value[k] >= 0 && value[k] <= 1000000, "values must be 0 to 1000000");
        std::vector<int>& deck = is_hijinks(k) ? hijinks_deck : havok_deck;
        deck.insert(deck.end(), copies[k], k);
    }
    require(hijinks_deck.size() >= 3 * MAX_PLAYERS, "the Hijinks deck needs 12 cards");
    for (const Dragon& d : dragons) require(d.ready_type >= 0 && d.ready_type < N_TYPES, "bad ready type");
    const int nd = static_cast<int>(dragons.size());
    for (int r = 0; r < n_refs(); ++r) {
        const Ability& a = abilities[r];
        const bool wanted = r >= first_event;  // treasures have no ability
        require(a.present == wanted, "abilities for events, Hijinks cards and innates only");
        if (!a.present) continue;
        require(a.type >= 0 && a.type < N_TYPES, "bad Hijinks type");
        require(static_cast<int>(a.ops.size()) == nd, "one effect list per dragon");
        if (is_innate(r)) require(a.crash == (((r - n_kinds) & 1) == 1), "innate slots are play, crash");
        if (is_event(r)) require(!a.crash, "events are not crashes");
        for (const auto& list : a.ops)
            for (const Op& op : list) {
                require(op.code >= 0 && op.code < N_OPS, "bad effect primitive");
                require(op.choose_from >= 1 && op.choose_from <= N_OPTIONS, "flip.choose_from 1-3");
                require(op.code != OP_FORESIGHT || (op.n >= 1 && op.n <= N_OPTIONS), "foresight.n 1-3");
                require(op.code != OP_DRAW || op.n >= 0, "draw needs n");
                require(op.count >= 0 && op.max_value >= 0 && op.max_gain >= 0 && op.else_draw >= 0,
                        "negative parameter");
                require(op.victim >= V_OPPONENT && op.victim <= V_RIGHT, "bad victim");
                require(op.count <= 1000 && op.else_draw <= 1000 && op.n <= 1000, "parameter too large");
            }
    }
    crash_on.assign(n_refs(), -1);
    for (int r = 0; r < n_refs(); ++r)
        if (abilities[r].present && abilities[r].crash) crash_on[r] = abilities[r].trigger.on;
    for (auto& bits : crash_kinds) bits = KindBits{};
    play_kinds = KindBits{};
    for (int k = first_hijinks; k < n_kinds && KindBits::fits(k); ++k) {
        if (!abilities[k].present) continue;
        if (!abilities[k].crash) play_kinds.add(k);
        else if (crash_on[k] >= 0 && crash_on[k] < N_TRIGGER_ONS) crash_kinds[crash_on[k]].add(k);
    }
    worth.assign(nd, std::vector<int>(n_kinds, 0));
    for (int d = 0; d < nd; ++d)
        for (int k = 0; k < n_kinds; ++k)
            worth[d][k] = value[k] + (is_treasure(k) && affinity[k] == dragons[d].affinity ? 1 : 0);
    most_worth.assign(nd, 0);  // (at least 0: an upper bound is all the check needs)
    for (int d = 0; d < nd; ++d)
        for (int w : worth[d]) most_worth[d] = std::max(most_worth[d], w);
    END = 0;
    PLAY = 1;
    INNATE_PLAY = PLAY + n_hijinks;
    INNATE_CRASH = INNATE_PLAY + 1;
    DISCARD = INNATE_CRASH + 1;
    SEAT = DISCARD + n_hijinks;
    TREASURE = SEAT + MAX_PLAYERS;
    OPTION = TREASURE + n_treasures;
    n_actions = OPTION + N_OPTIONS;
}


}  // namespace havok
