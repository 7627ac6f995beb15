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
    acted_.assign(num_envs, 0);
    ctrl_.assign(static_cast<size_t>(num_envs) * num_players, 0);
    if (learner) bots_.resize(static_cast<size_t>(num_envs) * num_players);
    games_.reserve(num_envs);
    for (int i = 0; i < num_envs; ++i) {
        games_.emplace_back(cards_, num_players, std::vector<int>(num_players, -1), 0, false, false);
        new_game(i);
    }
}

void Batch::set_league(int learner_dragon, std::vector<int> kinds, std::vector<double> weights) {
    if (!learner_) throw CoreError("a league needs the learner view");
    if (learner_dragon < -1 || learner_dragon >= static_cast<int>(cards_->dragons.size()))
        throw CoreError("no such dragon");
    if (kinds.size() != weights.size()) throw CoreError("one weight per opponent kind is needed");
    std::vector<double> cum;
    double total = 0.0;
    for (size_t k = 0; k < kinds.size(); ++k) {
        if (kinds[k] != RANDOM && kinds[k] != HEURISTIC && (kinds[k] < 1 || kinds[k] >= MAX_POLICIES))
            throw CoreError("an opponent kind is RANDOM, HEURISTIC or a policy 1 to 63");
        if (!(weights[k] >= 0.0) || weights[k] > 1e300) throw CoreError("weights must be finite and not negative");
        total += weights[k];
        cum.push_back(total);
    }
    if (!kinds.empty() && !(total > 0.0)) throw CoreError("the weights add up to nothing");
    learner_dragon_ = learner_dragon;
    league_kinds_ = std::move(kinds);
    league_cum_ = std::move(cum);
}

void Batch::new_game(int i) {
    // a game's seed, its learner seat, its opponents' generator and controllers, all from the
    // batch's stream (without a league, the stream of the batches made before leagues existed)
    uint64_t seed = rng_next(rng_) & ((1ULL << 63) - 1);
    std::vector<int> dragons(n_players_, -1);
    if (learner_) {
        const int seat = static_cast<int>(mod_below(rng_next(rng_), static_cast<uint64_t>(n_players_)));
        learner_seat_[i] = seat;
        opponent_rng_[i] = rng_next(rng_);
        int8_t* ctrl = &ctrl_[static_cast<size_t>(i) * n_players_];
        for (int q = 0; q < n_players_; ++q) {
            ctrl[q] = q == seat ? 0 : RANDOM;
            if (q == seat || league_kinds_.empty()) continue;
            // a uniform draw in [0, total) picks the kind (53 bits of the generator's word)
            const double u = static_cast<double>(rng_next(rng_) >> 11) * (1.0 / 9007199254740992.0) *
                             league_cum_.back();
            size_t k = std::upper_bound(league_cum_.begin(), league_cum_.end(), u) - league_cum_.begin();
            ctrl[q] = static_cast<int8_t>(league_kinds_[std::min(k, league_kinds_.size() - 1)]);
        }
        for (int q = 0; q < n_players_; ++q) bots_[static_cast<size_t>(i) * n_players_ + q].forget();
        if (learner_dragon_ >= 0) dragons[seat] = learner_dragon_;
    }
    games_[i].redeal(n_players_, dragons, seed, false);
}

void Batch::deal(int i) {
    do {  // (a learner view's opponents could in principle end a game before the learner acts)
        new_game(i);
        if (learner_) play_opponents(i);
    } while (games_[i].is_over());
    acted_[i] = 0;
}

void Batch::play_opponents(int i) {
    Game& g = games_[i];
    const size_t row = static_cast<size_t>(i) * n_players_;
    while (!g.is_over()) {
        const int p = g.to_act();
        const int c = ctrl_[row + p];
        if (c >= 0) return;  // the learner's or an outside policy's decision
        if (c == RANDOM) {
            const auto& choices = g.state().pending.choices;
            uint64_t r = rng_next(opponent_rng_[i]);
            g.apply(choices[mod_below(r, choices.size())]);
        } else {
            g.apply(bots_[row + p].choose(SeatKnowledge(g, p)));
        }
    }
}

void Batch::write_state(int i, float* dst) const {
    thread_local std::vector<int8_t> scratch;
    scratch.resize(cards_->n_actions);
    const Game& g = games_[i];
    const int me = learner_seat_[i];
    for (int k = 0; k < n_players_; ++k)
        observe(g, layout_, (me + k) % n_players_, dst + static_cast<size_t>(k) * layout_.size, scratch.data());
}

void Batch::write(int i, const Out& out) {
    const Game& g = games_[i];
    const int seat = g.to_act();
    observe(g, layout_, seat, out.obs + static_cast<size_t>(i) * layout_.size,
            out.mask + static_cast<size_t>(i) * cards_->n_actions);
    out.to_act[i] = seat;
    if (!learner_) return;
    const size_t row = static_cast<size_t>(i) * n_players_;
    if (out.ctrl) std::memcpy(out.ctrl + row, &ctrl_[row], n_players_);
    if (out.state && seat == learner_seat_[i]) write_state(i, out.state + row * layout_.size);
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

void Batch::step_one(int i, int64_t action, const Out& out, bool& ended, bool some) {
    Game& g = games_[i];
    if (learner_ && g.to_act() == learner_seat_[i]) acted_[i] = 1;
    g.apply(static_cast<int>(action));
    if (learner_) play_opponents(i);
    ended = g.is_over();
    if (!learner_) {
        out.terminated[i] = ended ? 1 : 0;
        final_rewards(g.state(), out.rewards + static_cast<size_t>(i) * n_players_);
        if (!ended) write(i, out);
        return;
    }
    // a game that ended before its learner acted (only outside policies played it) is dealt
    // again without a word: the learner has nothing to learn from it
    const bool report = ended && acted_[i];
    if (!some || report) {
        float r[MAX_PLAYERS];
        final_rewards(g.state(), r);
        out.terminated[i] = report ? 1 : 0;
        out.rewards[i] = report ? r[learner_seat_[i]] : 0.0f;
    }
    if (report) {
        const size_t at = static_cast<size_t>(i) * layout_.size;
        if (out.final_obs) {
            thread_local std::vector<int8_t> scratch;
            scratch.resize(cards_->n_actions);
            observe(g, layout_, learner_seat_[i], out.final_obs + at, scratch.data());
        }
        if (out.final_state) write_state(i, out.final_state + at * n_players_);
    }
    if (!ended) write(i, out);
}

void Batch::run(const int64_t* idx, const int64_t* actions, int n, const Out& out, int threads, bool some) {
    std::vector<char> ended(n, 0);
    auto work = [&](int lo, int hi) {
        for (int j = lo; j < hi; ++j) {
            bool e = false;
            step_one(idx ? static_cast<int>(idx[j]) : j, actions[j], out, e, some);
            ended[j] = e;
        }
    };
    threads = std::max(1, std::min(threads, n));
    if (threads == 1) {
        work(0, n);
    } else {
        std::vector<std::thread> pool;
        const int chunk = (n + threads - 1) / threads;
        for (int t = 0; t < threads; ++t) {
            int lo = t * chunk, hi = std::min(n, lo + chunk);
            if (lo < hi) pool.emplace_back(work, lo, hi);
        }
        for (auto& th : pool) th.join();
    }
    // the finished games are dealt anew in order, so the stream does not depend on threads
    for (int j = 0; j < n; ++j) {
        if (!ended[j]) continue;
        const int i = idx ? static_cast<int>(idx[j]) : j;
        deal(i);
        write(i, out);
    }
}

void Batch::step(const int64_t* actions, const Out& out, int threads) { run(nullptr, actions, size(), out, threads, false); }

int Batch::step_some(const int64_t* idx, const int64_t* actions, int n, const Out& out, int threads) {
    std::vector<char> seen(size(), 0);
    for (int j = 0; j < n; ++j) {
        const int64_t i = idx[j], a = actions[j];
        if (i < 0 || i >= size() || seen[i]) return j;
        seen[i] = 1;
        if (a < 0 || a >= cards_->n_actions || !games_[i].is_legal(static_cast<int>(a))) return j;
    }
    if (n > 0) run(idx, actions, n, out, threads, true);
    return -1;
}

}  // namespace havok
