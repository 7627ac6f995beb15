// Batched stepping: N games stepped in one call, for high-throughput learners (havok_env/vector.py).
// Each call validates every action first (a bad one changes nothing), then steps the games, in
// parallel chunks when asked, writing each game's observation and mask for the seat to act,
// rewards, terminations and that seat straight into caller-owned buffers. A finished game is
// replaced at once by a new one, dealt from the batch's seeded generator.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "engine.hpp"
#include "observer.hpp"

namespace havok {

// +1 to the sole winner, -1 to the rest; in a draw 0 to the tied leaders (havok_env's rewards).
void final_rewards(const State& s, float* out);

class Batch {
public:
    // ``learner``: false, every seat's decision comes through step(); true, the single-agent view:
    // each game has a learner seat (drawn per game) and the other seats play uniformly random
    // legal actions inside the step, drawn from the game's own generator.
    Batch(std::shared_ptr<const CardTables> cards, const ObsLayout& layout, int num_envs, int num_players,
          uint64_t seed, bool learner);

    int size() const { return static_cast<int>(games_.size()); }
    const Game& game(int i) const { return games_.at(i); }
    int learner_seat(int i) const { return learner_seat_.at(i); }

    // Buffers: obs[N * layout.size], mask[N * n_actions], rewards[N * R] (R = num_players, or 1
    // for the learner view), terminated[N], to_act[N]; final_obs[N * layout.size] gets the last
    // observation of each game that ended (the learner view only; may be null).
    struct Out {
        float* obs;
        int8_t* mask;
        float* rewards;
        uint8_t* terminated;
        int32_t* to_act;
        float* final_obs;
    };
    // New games everywhere (from ``seed``), their first observations written.
    void reset(uint64_t seed, const Out& out);
    // -1 if every action is legal for its game, else the index of the first that is not.
    int first_illegal(const int64_t* actions) const;
    // Steps every game (actions checked by first_illegal), with ``threads`` worker threads.
    void step(const int64_t* actions, const Out& out, int threads);

private:
    std::shared_ptr<const CardTables> cards_;
    ObsLayout layout_;
    int n_players_;
    bool learner_;
    uint64_t rng_ = 0;
    std::vector<Game> games_;
    std::vector<int> learner_seat_;
    std::vector<uint64_t> opponent_rng_;

    void new_game(int i);  // from the batch generator (called in order, before any threads)
    void play_opponents(int i);
    void deal(int i);  // a new game whose first decision is the learner's (or anyone's)
    void write(int i, const Out& out);
    void step_one(int i, int64_t action, const Out& out, bool& ended);
};

}  // namespace havok
