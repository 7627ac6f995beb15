// Batched stepping (vector.hpp).
#include "vector.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace havok {

void final_rewards(const State& s, float* out) {
    for (int p = 0; p < s.n; ++p) out[p] = 0.0f;
    if (!s.has_result) return;
    const auto& w = s.result.winners;
    const float won = w.size() == 1 ? 1.0f : 0.0f;
    for (int p = 0; p < s.n; ++p) out[p] = std::find(w.begin(), w.end(), p) != w.end() ? won : -1.0f;
}

Batch::Batch(std::shared_ptr<const CardTables> cards, const ObsLayout& layout, int num_envs, int num_players,
             uint64_t seed, bool learner)
    : cards_(std::move(cards)), layout_(layout), n_players_(num_players), learner_(learner), rng_(seed) {
    if (num_envs < 1 || num_envs > 1000000) throw CoreError("num_envs must be 1 to 1000000");
    if (num_players < 2 || num_players > MAX_PLAYERS) throw CoreError("num_players must be 2, 3 or 4");
    learner_seat_.assign(num_envs, -1);
    opponent_rng_.assign(num_envs, 0);
    games_.reserve(num_envs);
    for (int i = 0; i < num_envs; ++i) {
        games_.emplace_back(cards_, num_players, std::vector<int>(num_players, -1), 0, false, false);
        new_game(i);
    }
}

void Batch::new_game(int i) {
    // a game's seed, its learner seat and its opponents' generator, all from the batch's stream
    uint64_t seed = rng_next(rng_) & ((1ULL << 63) - 1);
    games_[i].redeal(n_players_, std::vector<int>(n_players_, -1), seed, false);
    if (learner_) {
        learner_seat_[i] = static_cast<int>(mod_below(rng_next(rng_), static_cast<uint64_t>(n_players_)));
        opponent_rng_[i] = rng_next(rng_);
    }
}

void Batch::deal(int i) {
    do {  // (a learner view's opponents could in principle end a game before the learner acts)
        new_game(i);
        if (learner_) play_opponents(i);
    } while (games_[i].is_over());
}

void Batch::play_opponents(int i) {
    Game& g = games_[i];
    while (!g.is_over() && g.to_act() != learner_seat_[i]) {
        const auto& choices = g.state().pending.choices;
        uint64_t r = rng_next(opponent_rng_[i]);
        g.apply(choices[mod_below(r, choices.size())]);
    }
}

void Batch::write(int i, const Out& out) {
    const Game& g = games_[i];
    const int seat = learner_ ? learner_seat_[i] : g.to_act();
    observe(g, layout_, seat, out.obs + static_cast<size_t>(i) * layout_.size,
            out.mask + static_cast<size_t>(i) * cards_->n_actions);
    out.to_act[i] = seat;
}

void Batch::reset(uint64_t seed, const Out& out) {
    rng_ = seed;
    for (int i = 0; i < size(); ++i) {
        deal(i);
        write(i, out);
        out.terminated[i] = 0;
        const int r = learner_ ? 1 : n_players_;
        std::fill(out.rewards + static_cast<size_t>(i) * r, out.rewards + static_cast<size_t>(i + 1) * r, 0.0f);
    }
}

int Batch::first_illegal(const int64_t* actions) const {
    for (int i = 0; i < size(); ++i) {
        int64_t a = actions[i];
        if (a < 0 || a >= cards_->n_actions || !games_[i].is_legal(static_cast<int>(a))) return i;
    }
    return -1;
}

void Batch::step_one(int i, int64_t action, const Out& out, bool& ended) {
    Game& g = games_[i];
    g.apply(static_cast<int>(action));
    if (learner_) play_opponents(i);
    ended = g.is_over();
    out.terminated[i] = ended ? 1 : 0;
    if (learner_) {
        float r[MAX_PLAYERS];
        final_rewards(g.state(), r);
        out.rewards[i] = r[learner_seat_[i]];
        if (ended && out.final_obs) {
            std::vector<int8_t> scratch(cards_->n_actions);
            observe(g, layout_, learner_seat_[i], out.final_obs + static_cast<size_t>(i) * layout_.size,
                    scratch.data());
        }
    } else {
        final_rewards(g.state(), out.rewards + static_cast<size_t>(i) * n_players_);
    }
    if (!ended) write(i, out);
}

void Batch::step(const int64_t* actions, const Out& out, int threads) {
    const int n = size();
    std::vector<char> ended(n, 0);
    auto run = [&](int lo, int hi) {
        for (int i = lo; i < hi; ++i) {
            bool e = false;
            step_one(i, actions[i], out, e);
            ended[i] = e;
        }
    };
    threads = std::max(1, std::min(threads, n));
    if (threads == 1) {
        run(0, n);
    } else {
        std::vector<std::thread> pool;
        const int chunk = (n + threads - 1) / threads;
        for (int t = 0; t < threads; ++t) {
            int lo = t * chunk, hi = std::min(n, lo + chunk);
            if (lo < hi) pool.emplace_back(run, lo, hi);
        }
        for (auto& th : pool) th.join();
    }
    // the finished games are dealt anew in index order, so the stream does not depend on threads
    for (int i = 0; i < n; ++i) {
        if (!ended[i]) continue;
        deal(i);
        write(i, out);
    }
}

}  // namespace havok
