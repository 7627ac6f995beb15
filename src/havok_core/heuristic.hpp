// The heuristic bot (the middle rung of the ladder; its strategy in plain words is
// agents/heuristic.py's docstring), and search rollouts played with it inside the core.
//
// The bot sees a game only through SeatKnowledge: its own hand and knowledge of the Havok deck,
// the public piles, hoards and seats, and the targeting rules (which read only those), exactly
// what havok_env.view.SeatView gives a Python bot. It is deterministic.
#pragma once
#include <utility>
#include <vector>

#include "engine.hpp"

namespace havok {

// What one seat may know of a game (havok_env.view.SeatView's information), read-only.
class SeatKnowledge {
public:
    SeatKnowledge(const Game& g, int seat);

    int seat() const { return seat_; }
    int n() const { return s().n; }
    const CardTables& cards() const { return g_.cards(); }
    int turn() const { return s().turn; }
    int current() const { return s().current; }
    const Hand& hand() const { return s().hands[seat_]; }  // this seat's own hand
    int hand_size(int q) const { return static_cast<int>(s().hands[q].size()); }
    const Cards& hoard(int q) const { return s().hoards[q]; }
    int dragon(int q) const { return s().dragons[q]; }
    bool ready(int q) const { return s().ready[q]; }
    // how many more Hijinks cards seat q may use this turn
    int cards_left(int q) const;
    const Cards& discard() const { return s().discard; }
    const Cards& trash() const { return s().trash; }
    // the Havok cards this seat has seen on top of the deck, top first
    const Cards& known_top() const { return s().known[seat_]; }
    // The Havok deck's composition (public by elimination) as (kind, count), kinds in the order
    // in which they first appear in the deck: the order Python's Counter(deck) gave the former
    // Python heuristic, whose float sums this reproduces. Only the order of a sum depends on it.
    std::vector<std::pair<int, int>> havok_remaining() const;
    int worth(int q, int kind) const { return g_.worth(q, kind); }
    std::vector<int> scores() const { return g_.scores(); }
    // The pending decision if it is this seat's, else null.
    const Pending* pending() const;
    // The effect list of ability ``ref`` used by (or resolving for) seat q.
    const std::vector<Op>& ops(int ref, int q) const { return g_.ops_for(ref, q); }
    // the targeting rules (effects.cpp): public information only
    Seats victims(int you, int actor, int sel) const { return g_.victim_seats(you, actor, sel); }
    int thief(int you, const Op& op) const { return g_.thief(you, op); }
    std::vector<int> eligible(int owner, int max_value, const Cards& exclude = {}) const {
        return g_.eligible(owner, max_value, exclude);
    }
    std::vector<int> trade_gives(int you, const Op& op) const { return g_.trade_gives(you, op); }
    std::vector<int> trade_takes(int you, int victim, const Op& op) const { return g_.trade_takes(you, victim, op); }
    std::vector<int> salvage_options(const Op& op) const { return g_.salvage_options(op); }
    std::vector<int> redirect_seats(int flipper, const Op& op) const { return g_.redirect_seats(flipper, op).vec(); }
    std::pair<int, int> tribute_seats(int you) const { return g_.tribute_seats(you); }
    std::vector<int> pass_seats(int you, const Op& op) const { return g_.pass_seats(you, op).vec(); }

private:
    const State& s() const { return g_.state(); }
    const Game& g_;
    int seat_;
};

// One seat's heuristic player. What it carries from one decision to the next: the stake of its
// last play (what an opponent's crash of it costs) and the trigger of the last crash window it
// was asked about (for the redirect and swap choices that follow).
class Heuristic {
public:
    // The seat's choice at its pending decision (CoreError if it has none).
    int choose(const SeatKnowledge& view);
    // Forget what earlier decisions left behind: a reused bot then plays like a fresh one.
    void forget() {
        stake_ = 1.5;
        has_trigger_ = false;
    }

    // what it carries, for pickling: the stake and the last trigger (null if none)
    double stake() const { return stake_; }
    const Trigger* trigger() const { return has_trigger_ ? &trigger_ : nullptr; }
    void restore(double stake, const Trigger* trigger) {
        stake_ = stake;
        has_trigger_ = trigger != nullptr;
        if (trigger != nullptr) trigger_ = *trigger;
    }

    // For tests: the bot's judgement of one thing at the seat's pending decision (what: 0 the
    // gain of using ability ``ref``; 1 of a use trigger taking effect; 2 of event ``ref``
    // resolving for seat ``who``; 3 of crashing with action ``ref`` on ``trig``).
    double judge(const SeatKnowledge& view, int what, int ref, int who, const Trigger& trig);

private:
    friend class Decision;
    double stake_ = 1.5;
    bool has_trigger_ = false;
    Trigger trigger_;
};

// Search rollouts (agents/search.py): play ``g`` on with the heuristic in every seat (or, with
// ``random_others``, uniformly random legal actions drawn with ``draw`` in the seats but ``me``)
// for ``max_turns`` turns (< 0: to the end), and score it for ``me``: +1 a win, 0 a draw, -1 a
// loss, an unfinished game its margin / 8 clipped to +-1; plus margin_weight * margin.
// ``steps`` gets the number of decisions played. Every rollout starts with fresh bots.
struct RandomDraw {
    virtual ~RandomDraw() = default;
    virtual int below(int k) = 0;  // uniform in [0, k)
};
// A learned value of an unfinished rollout's last state for ``me``, in [-1, 1], in place of its
// margin / 8 (search.py's ``value`` option).
struct LeafValue {
    virtual ~LeafValue() = default;
    virtual double operator()(const Game& g, int me) const = 0;
};
double rollout(Game& g, int me, int max_turns, double margin_weight, RandomDraw* random_others, int& steps,
               const LeafValue* leaf = nullptr);

}  // namespace havok
