// Many games in one call: Batch (vector.hpp, for high-throughput learners through
// havok_env/vector.py), stepped with the GIL released straight into the caller's numpy buffers,
// and whole random games played inside the core (random_playouts, for benchmarks/throughput.py),
// with the core's own reduction of its random draws (mod_below) for the tests to hold to Python's.
#include <nanobind/ndarray.h>

#include <memory>

#include "py_bind.hpp"
#include "py_data.hpp"
#include "py_game.hpp"
#include "vector.hpp"

namespace havok::py {

void bind_batch(nb::module_& m) {
    using F32 = nb::ndarray<float, nb::c_contig, nb::device::cpu>;
    using I8 = nb::ndarray<int8_t, nb::c_contig, nb::device::cpu>;
    using U8 = nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu>;
    using I32 = nb::ndarray<int32_t, nb::c_contig, nb::device::cpu>;
    using I64 = nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
    struct Outs {
        static Batch::Out check(const Batch& b, const Layout& L, int rewards_per_env, F32 obs, I8 mask,
                                F32 rewards, U8 terminated, I32 to_act, float* final_obs) {
            const size_t n = static_cast<size_t>(b.size());
            if (obs.size() != n * L.layout.size || mask.size() != n * b.game(0).cards().n_actions ||
                rewards.size() != n * rewards_per_env || terminated.size() != n || to_act.size() != n)
                throw CoreError("batch buffers of the wrong size");
            return {obs.data(), mask.data(), rewards.data(), terminated.data(), to_act.data(), final_obs};
        }
        // the learner view's optional buffers: final_obs [N, obs], ctrl [N, players], state and
        // final_state [N, players * obs]
        static Batch::Out extra(const Batch& b, const Layout& L, Batch::Out out, std::optional<F32> final_obs,
                                std::optional<I8> ctrl, std::optional<F32> state, std::optional<F32> final_state) {
            const size_t n = static_cast<size_t>(b.size()), seats = static_cast<size_t>(b.game(0).state().n);
            auto sized = [](size_t got, size_t want) {
                if (got != want) throw CoreError("batch buffers of the wrong size");
            };
            if (final_obs) sized(final_obs->size(), n * L.layout.size), out.final_obs = final_obs->data();
            if (ctrl) sized(ctrl->size(), n * seats), out.ctrl = ctrl->data();
            if (state) sized(state->size(), n * seats * L.layout.size), out.state = state->data();
            if (final_state) sized(final_state->size(), n * seats * L.layout.size), out.final_state = final_state->data();
            return out;
        }
    };
    nb::class_<Batch>(m, "Batch")
        .def("__init__", [](Batch* self, std::shared_ptr<const CardTables> cs, const Layout& L, int num_envs,
                            int num_players, uint64_t seed, bool learner) {
            new (self) Batch(std::move(cs), L.layout, num_envs, num_players, seed, learner);
        })
        .def_prop_ro("size", &Batch::size)
        .def("learner_seat", &Batch::learner_seat)
        .def("game", [](const Batch& b, int i) {
            if (i < 0 || i >= b.size()) throw CoreError("no such game");
            auto pg = std::make_unique<PyGame>();
            pg->g = std::make_unique<Game>(b.game(i));
            return pg.release();
        }, nb::rv_policy::take_ownership, "A copy of game i.")
        .def("reset", [](Batch& b, const Layout& L, int per_env, uint64_t seed, F32 obs, I8 mask, F32 rewards,
                         U8 terminated, I32 to_act, std::optional<I8> ctrl, std::optional<F32> state) {
            Batch::Out out = Outs::extra(b, L, Outs::check(b, L, per_env, obs, mask, rewards, terminated, to_act,
                                                           nullptr), std::nullopt, ctrl, state, std::nullopt);
            nb::gil_scoped_release nogil;
            b.reset(seed, out);
        }, nb::arg("layout"), nb::arg("per_env"), nb::arg("seed"), nb::arg("obs"), nb::arg("mask"), nb::arg("rewards"),
           nb::arg("terminated"), nb::arg("to_act"), nb::arg("ctrl").none() = nb::none(),
           nb::arg("state").none() = nb::none())
        .def("step", [](Batch& b, const Layout& L, int per_env, I64 actions, F32 obs, I8 mask, F32 rewards,
                        U8 terminated, I32 to_act, std::optional<F32> final_obs, int threads,
                        std::optional<I8> ctrl, std::optional<F32> state, std::optional<F32> final_state) {
            if (actions.shape(0) != static_cast<size_t>(b.size())) throw CoreError("one action per game is needed");
            Batch::Out out = Outs::extra(b, L, Outs::check(b, L, per_env, obs, mask, rewards, terminated, to_act,
                                                           nullptr), final_obs, ctrl, state, final_state);
            int bad = b.first_illegal(actions.data());
            if (bad >= 0) return bad;
            nb::gil_scoped_release nogil;
            b.step(actions.data(), out, threads);
            return -1;
        }, nb::arg("layout"), nb::arg("per_env"), nb::arg("actions"), nb::arg("obs"), nb::arg("mask"),
           nb::arg("rewards"), nb::arg("terminated"), nb::arg("to_act"), nb::arg("final_obs").none(),
           nb::arg("threads"), nb::arg("ctrl").none() = nb::none(), nb::arg("state").none() = nb::none(),
           nb::arg("final_state").none() = nb::none(),
           "Step every game (the GIL released); -1, or the index of the first illegal action "
           "(then nothing changed).")
        .def("step_some", [](Batch& b, const Layout& L, I64 idx, I64 actions, F32 obs, I8 mask, F32 rewards,
                             U8 terminated, I32 to_act, std::optional<F32> final_obs, int threads,
                             std::optional<I8> ctrl, std::optional<F32> state, std::optional<F32> final_state) {
            if (idx.shape(0) != actions.shape(0)) throw CoreError("one action per game index is needed");
            Batch::Out out = Outs::extra(b, L, Outs::check(b, L, 1, obs, mask, rewards, terminated, to_act, nullptr),
                                         final_obs, ctrl, state, final_state);
            const int n = static_cast<int>(idx.shape(0));
            nb::gil_scoped_release nogil;
            return b.step_some(idx.data(), actions.data(), n, out, threads);
        }, nb::arg("layout"), nb::arg("idx"), nb::arg("actions"), nb::arg("obs"), nb::arg("mask"),
           nb::arg("rewards"), nb::arg("terminated"), nb::arg("to_act"), nb::arg("final_obs").none(),
           nb::arg("threads"), nb::arg("ctrl").none() = nb::none(), nb::arg("state").none() = nb::none(),
           nb::arg("final_state").none() = nb::none(),
           "Step the learner view's games idx only (the GIL released); -1, or the position in idx of the "
           "first bad index or illegal action (then nothing changed).")
        .def("set_league", &Batch::set_league, nb::arg("learner_dragon"), nb::arg("kinds"), nb::arg("weights"),
             "The learner view's deals from now on: the learner's dragon (-1 random) and the opponents' "
             "controllers, drawn per seat with these weights.")
        .def_ro_static("RANDOM", &Batch::RANDOM)
        .def_ro_static("HEURISTIC", &Batch::HEURISTIC)
        .def_ro_static("MAX_POLICIES", &Batch::MAX_POLICIES);

    m.def("mod_below", [](uint64_t x, uint64_t d) {
        if (d == 0) throw CoreError("the divisor must be positive");
        return mod_below(x, d);
    }, nb::arg("x"), nb::arg("d"),
       "x % d as the core's shuffles and random choices compute it (through a table of "
       "reciprocals): tests hold it to Python's %.");
    m.def("random_playouts", [](std::shared_ptr<const CardTables> cs, int num_players, int games, uint64_t seed) {
        if (num_players < 2 || num_players > MAX_PLAYERS || games < 0) throw CoreError("bad playout count");
        nb::gil_scoped_release nogil;
        long long decisions = 0;
        std::unique_ptr<Game> game;
        for (int k = 0; k < games; ++k) {
            const uint64_t game_seed = rng_next(seed) >> 1;
            if (!game)
                game = std::make_unique<Game>(cs, num_players, std::vector<int>(num_players, -1), game_seed, false);
            else
                game->redeal(num_players, std::vector<int>(num_players, -1), game_seed, false);
            Game& g = *game;
            while (!g.is_over()) {
                g.apply_choice(mod_below(rng_next(seed), g.state().pending.choices.size()));
                ++decisions;
            }
        }
        return decisions;
    }, nb::arg("tables"), nb::arg("num_players"), nb::arg("games"), nb::arg("seed"),
       "Plays whole games inside the core with uniformly random legal actions (the GIL "
       "released); the number of decisions taken (benchmarks/throughput.py).");
}

}  // namespace havok::py
