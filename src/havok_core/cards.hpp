// The card tables: what havok_env/cards.py loads and validates from the TOML files, handed to the
// core as plain tables. The core never reads files; it interprets the effect primitives below.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace havok {

constexpr int ANY = 1 << 30;  // "any value"
// the rulebook's numbers: havok_env/constants.py's, which a test holds these to
constexpr int MAX_PLAYERS = 4;
constexpr int N_OPTIONS = 3;
constexpr int HAND_SIZE = 3;
constexpr int WIN_SCORE = 15;

// Errors the Python layer turns into its own exceptions (bad tables, corrupt positions).
struct CoreError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws CoreError(what), out of line: the range checks on the hot path (frames, abilities) stay
// small enough to be inlined when building the error is not part of them.
[[noreturn]] void fail(const char* what);

// The effect primitives, in the order of cards.OP_PARAMS.
enum OpCode : int {
    OP_STEAL, OP_BREAK, OP_TRADE, OP_SALVAGE, OP_PASS_LEFT, OP_DRAW, OP_DISCARD_HAND, OP_FLIP,
    OP_FORESIGHT, OP_RECALL, OP_EXTRA_PLAY, OP_TIRE, OP_READY, OP_RESTRICT, OP_BREAK_LOWEST_ALL,
    OP_TRIBUTE, OP_TREASURE_MAP, OP_CANCEL, OP_NULLIFY, OP_REDIRECT_EVENT, OP_REDIRECT_TREASURE,
    OP_DIVERT_BREAK, OP_SWAP_TARGET, N_OPS
};
extern const char* const OP_NAMES[N_OPS];

// Victim selectors of steal, break and trade.
enum Victim : int { V_OPPONENT, V_RICHER, V_RICHEST, V_YOU, V_RIGHT };

// The Hijinks types, in the order of cards.HIJINKS_TYPES.
constexpr int N_TYPES = 12;
extern const char* const TYPE_NAMES[N_TYPES];

// One primitive with its parameters; absent parameters hold their defaults (OP_PARAMS in
// havok_env/cards.py).
struct Op {
    int code = 0;
    int max_value = ANY;
    int count = 1;
    int victim = V_OPPONENT;
    bool thief_right = false;
    bool has_max_gain = false;
    int max_gain = ANY;
    bool give_lowest = false;
    bool pick_best = false;
    int else_draw = 0;
    bool skip_you = false;
    int n = -1;  // draw and foresight; -1: missing
    int choose_from = 1;
    bool optional = false;
    bool who_actor = false;
    bool to_discard = false;
    bool to_choice = false;
};

enum TriggerOn : int { ON_EVENT, ON_TREASURE, ON_USE };
constexpr int N_TRIGGER_ONS = 3;

// Card kinds below 128 as bits: the kinds a hand holds (state.hpp's Hand), and the kinds of a
// class the tables list once (the crash cards of each trigger, the cards that may be played).
struct KindBits {
    uint64_t w[2] = {0, 0};
    static bool fits(int k) { return static_cast<unsigned>(k) < 128; }
    void add(int k) { w[k >> 6] |= uint64_t{1} << (k & 63); }  // (a kind that fits)
};

enum Targets : int { T_ANY, T_OWN, T_OTHER };

struct TriggerSpec {
    int on = ON_EVENT;
    int max_printed = ANY;
    bool uses_play = true, uses_crash = false;  // default: plays only
    bool has_types = false;
    uint32_t types = 0;  // bit per Hijinks type
    int targets = T_ANY;
    bool needs_spare = false;
};

// A Hijinks card kind, an event or a dragon's innate ability.
struct Ability {
    bool present = false;
    std::string name;
    bool crash = false;
    int type = 0;
    TriggerSpec trigger;
    // ops[dragon]: the effect list for a user of that dragon (its affinity's bonus applied)
    std::vector<std::vector<Op>> ops;
};

struct Dragon {
    std::string name;
    int affinity = 0;
    int ready_type = 0;
};

// Everything the engine needs to know about the card set, indexed by card kind: treasures, then
// events, then Hijinks cards. Abilities are indexed by *ability reference*: a card kind, or
// n_kinds + 2 * dragon + (0 play | 1 crash) for the innate abilities.
struct CardTables {
    int n_treasures = 0, n_events = 0, n_hijinks = 0, n_kinds = 0;
    int first_event = 0, first_hijinks = 0;
    int starting_treasure = 0;
    std::vector<std::string> names;
    std::vector<int> copies, value;
    std::vector<int> affinity;  // kind -> affinity index, -1 for none
    std::vector<Ability> abilities;
    std::vector<Dragon> dragons;
    std::vector<std::vector<int>> worth;  // worth[dragon][kind]: value in that dragon's hoard
    // most_worth[dragon]: the most any kind is worth to it (a hoard of k cards scores at most k times it)
    std::vector<int> most_worth;
    // the decks before the deal: every copy of each kind, in kind order
    std::vector<int> havok_deck, hijinks_deck;
    // crash_on[ref]: the trigger (TriggerOn) of a crash ability, -1 for one that is no crash;
    // a crash window asks every seat, and this answers most of them without the ability itself
    std::vector<int> crash_on;
    // the same as kind bits (kinds below 128): crash_kinds[on] the Hijinks cards that crash on
    // that trigger, play_kinds those that are played rather than crashed
    KindBits crash_kinds[N_TRIGGER_ONS], play_kinds;

    // the shared action space (engine.ActionLayout)
    int END = 0, PLAY = 1, INNATE_PLAY = 0, INNATE_CRASH = 0, DISCARD = 0, SEAT = 0, TREASURE = 0,
        OPTION = 0, n_actions = 0;

    // Checks the sizes and ranges that the engine relies on and builds the derived tables.
    void finish();

    bool is_treasure(int k) const { return k >= 0 && k < n_treasures; }
    bool is_event(int k) const { return k >= first_event && k < first_hijinks; }
    bool is_hijinks(int k) const { return k >= first_hijinks && k < n_kinds; }
    int innate(int dragon, bool crash) const { return n_kinds + 2 * dragon + (crash ? 1 : 0); }
    bool is_innate(int ref) const { return ref >= n_kinds; }
    int n_refs() const { return n_kinds + 2 * static_cast<int>(dragons.size()); }
    const Ability& ability(int ref) const {
        if (ref < 0 || ref >= n_refs() || !abilities[ref].present) fail("no such ability");
        return abilities[ref];
    }
    bool crashes_on(int ref, int on) const {
        return ref >= 0 && ref < static_cast<int>(crash_on.size()) && crash_on[ref] == on;
    }
    const KindBits& crash_kinds_on(int on) const {
        static constexpr KindBits NO_KINDS{};
        return on >= 0 && on < N_TRIGGER_ONS ? crash_kinds[on] : NO_KINDS;
    }
    const std::vector<Op>& ops(int ref, int dragon) const {
        const Ability& a = ability(ref);
        if (dragon < 0 || dragon >= static_cast<int>(a.ops.size())) fail("no such dragon");
        return a.ops[dragon];
    }
};

}  // namespace havok
