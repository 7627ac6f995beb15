// Batched stepping: N games stepped in one call, for high-throughput learners (havok_env/vector.py).
// Each call validates every action first (a bad one changes nothing), then steps the games, in
// parallel chunks when asked, writing each game's observation and mask for the seat to act,
// rewards, terminations and that seat straight into caller-owned buffers. A finished game is
// replaced at once by a new one, dealt from the batch's seeded generator.
//
// The learner view (``learner``) gives every seat of a game a controller: the learner (0), a
// policy outside the core (1, 2, ...: frozen networks, evaluated by the caller for all games that
// wait on it at once), or a bot inside the core (RANDOM, HEURISTIC), which plays inside the step.
// A step stops each game where a seat outside the core must act.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "engine.hpp"
#include "heuristic.hpp"
#include "observer.hpp"

namespace havok {

// +1 to the sole winner, -1 to the rest; in a draw 0 to the tied leaders (havok_env's rewards).
void final_rewards(const State& s, float* out);

class Batch {
public:
    static constexpr int RANDOM = -1, HEURISTIC = -2;  // controllers inside the core
    static constexpr int MAX_POLICIES = 64;            // controllers outside: 0 .. MAX_POLICIES - 1

    // ``learner``: false, every seat's decision comes through step(); true, the single-agent view:
    // each game has a learner seat (drawn per game) and the other seats play uniformly random
    // legal actions inside the step, drawn from the game's own generator, until set_league says
    // otherwise.
    Batch(std::shared_ptr<const CardTables> cards, const ObsLayout& layout, int num_envs, int num_players,
          uint64_t seed, bool learner);

    int size() const { return static_cast<int>(games_.size()); }
    const Game& game(int i) const { return games_.at(i); }
    int learner_seat(int i) const { return learner_seat_.at(i); }

    // The learner view's deal from now on: the learner's dragon (-1 random) and, for each other
    // seat of each new game, a controller drawn with these weights (each of ``kinds`` is RANDOM,
    // HEURISTIC or a policy 1 .. MAX_POLICIES - 1). No kinds: random opponents, the default, drawn
    // exactly as before any league was set.
    void set_league(int learner_dragon, std::vector<int> kinds, std::vector<double> weights);

    // Buffers: obs[N * layout.size], mask[N * n_actions], rewards[N * R] (R = num_players, or 1
    // for the learner view), terminated[N], to_act[N]; final_obs[N * layout.size] gets the last
    // observation of each game that ended (the learner view only; may be null). The learner view
    // also fills, where given, ctrl[N * num_players] (each seat's controller, written when a game
    // is dealt), state[N * num_players * layout.size] (every seat's observation, the learner's
    // first and the others clockwise from it, written when the learner is to act) and
    // final_state (the same at the end of a game).
    struct Out {
        float* obs;
        int8_t* mask;
        float* rewards;
        uint8_t* terminated;
        int32_t* to_act;
        float* final_obs;
        int8_t* ctrl = nullptr;
        float* state = nullptr;
        float* final_state = nullptr;
    };
    // New games everywhere (from ``seed``), their first observations written.
    void reset(uint64_t seed, const Out& out);
    // -1 if every action is legal for its game, else the index of the first that is not.
    int first_illegal(const int64_t* actions) const;
    // Steps every game (actions checked by first_illegal), with ``threads`` worker threads.
    void step(const int64_t* actions, const Out& out, int threads);
    // Steps only games idx[0 .. n) (the learner view: each waiting on a policy outside the core),
    // leaving the other games' rewards and terminations as they are; -1, or the position in idx
    // of the first bad index or illegal action (then nothing changed).
    int step_some(const int64_t* idx, const int64_t* actions, int n, const Out& out, int threads);

private:
    std::shared_ptr<const CardTables> cards_;
    ObsLayout layout_;
    int n_players_;
    bool learner_;
    uint64_t rng_ = 0;
    std::vector<Game> games_;
    std::vector<int> learner_seat_;
    std::vector<uint64_t> opponent_rng_;
    int learner_dragon_ = -1;
    std::vector<int> league_kinds_;
    std::vector<double> league_cum_;       // cumulative weights
    std::vector<int8_t> ctrl_;             // [N * n_players]
    std::vector<Heuristic> bots_;          // [N * n_players], the HEURISTIC seats' players
    std::vector<char> acted_;              // whether the learner has acted in game i

    void new_game(int i);  // from the batch generator (called in order, before any threads)
    void play_opponents(int i);
    void deal(int i);  // a new game whose first decision is the learner's (or anyone's)
    void write(int i, const Out& out);
    void write_state(int i, float* dst) const;
    void step_one(int i, int64_t action, const Out& out, bool& ended, bool some);
    void run(const int64_t* idx, const int64_t* actions, int n, const Out& out, int threads, bool some);
};

}  // namespace havok
