#include "value_net.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cards.hpp"  // CoreError

namespace havok {

namespace {
// four floats, one SSE register (GCC's and Clang's vector extension: each lane's product and sum
// is the IEEE float operation, as if written one unit at a time)
typedef float v4 __attribute__((vector_size(16)));
constexpr int NV = 8, BLOCK = 4 * NV;  // units held in registers at a time
}

ValueNet::ValueNet(std::vector<std::vector<float>> weights, std::vector<std::vector<float>> biases,
                   const std::vector<std::pair<int, int>>& shapes) {
    const size_t n = shapes.size();
    if (n == 0) throw CoreError("a value network needs at least one layer");
    if (weights.size() != n || biases.size() != n)
        throw CoreError(std::to_string(weights.size()) + " weight matrices and " + std::to_string(biases.size()) +
                        " bias vectors: a value network needs one of each per layer");
    for (size_t l = 0; l < n; ++l) {
        const auto [in, out] = shapes[l];
        const std::string which = "value network layer " + std::to_string(l);
        if (in <= 0 || out <= 0 || weights[l].size() != static_cast<size_t>(in) * out)
            throw CoreError(which + ": the weights do not have their shape");
        if (biases[l].size() != static_cast<size_t>(out))
            throw CoreError(which + ": " + std::to_string(biases[l].size()) + " biases for " + std::to_string(out) +
                            " outputs");
        if (l > 0 && in != shapes[l - 1].second)
            throw CoreError(which + " takes " + std::to_string(in) + " inputs but the layer before gives " +
                            std::to_string(shapes[l - 1].second));
        auto finite = [](const std::vector<float>& v) {
            return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
        };
        if (!finite(weights[l]) || !finite(biases[l])) throw CoreError(which + " holds a number that is not finite");
        widest_ = std::max({widest_, in, out});
        layers_.push_back({in, out, std::move(weights[l]), std::move(biases[l])});
    }
    if (shapes.back().second != 1)
        throw CoreError("a value network ends in one output, not " + std::to_string(shapes.back().second));
}

// Each row on its own, in float32 (as the network was fitted), every product and sum rounded as
// written (this file is compiled with -ffp-contract=off: no fused multiply-adds): a layer's unit j
// starts at its bias and adds x[i] * w[i][j] for each nonzero input i in increasing i, one rounded
// product and one rounded sum at a time; a hidden unit is then max(0, that). A zero input (or
// hidden unit) adds nothing and is skipped, so its order and its count are the row's own, never
// the batch's. The loop over j has no dependence between units, so the compiler may vectorise it
// without changing any unit's sums. The output's tanh is taken in double and rounded to float once.
void ValueNet::predict(const float* rows, size_t count, float* out) const {
    std::vector<float> a(static_cast<size_t>(widest_)), h(static_cast<size_t>(widest_));
    std::vector<int> nz(static_cast<size_t>(widest_));
    const int width = inputs();
    for (size_t r = 0; r < count; ++r) {
        const float* x = rows + r * static_cast<size_t>(width);
        int k = 0;
        for (int i = 0; i < width; ++i)
            if (x[i] != 0.0f) nz[k++] = i;
        for (size_t l = 0; l < layers_.size(); ++l) {
            const Layer& L = layers_[l];
            float* o = h.data();
            // BLOCK units at a time, held in registers across the inputs (unit by unit the same
            // sums in the same order; the compiler's own vectorisation gathered across inputs)
            int j0 = 0;
            for (; j0 + BLOCK <= L.out; j0 += BLOCK) {
                v4 acc[NV];
                std::memcpy(acc, L.b.data() + j0, sizeof acc);
                for (int t = 0; t < k; ++t) {
                    const int i = nz[t];
                    const v4 v = {x[i], x[i], x[i], x[i]};
                    const float* w = L.w.data() + static_cast<size_t>(i) * L.out + j0;
                    for (int u = 0; u < NV; ++u) {
                        v4 wu;
                        std::memcpy(&wu, w + 4 * u, sizeof wu);
                        acc[u] += v * wu;
                    }
                }
                std::memcpy(o + j0, acc, sizeof acc);
            }
            for (int j = j0; j < L.out; ++j) {
                float acc = L.b[j];
                for (int t = 0; t < k; ++t) acc += x[nz[t]] * L.w[static_cast<size_t>(nz[t]) * L.out + j];
                o[j] = acc;
            }
            if (l + 1 == layers_.size()) {
                out[r] = static_cast<float>(std::tanh(static_cast<double>(o[0])));
                break;
            }
            k = 0;
            for (int j = 0; j < L.out; ++j) {  // without a branch: about half the units are zero
                const bool zero = o[j] <= 0.0f;   // a NaN (from a NaN input) is kept, and comes out as NaN
                o[j] = zero ? 0.0f : o[j];
                nz[k] = j;
                k += !zero;
            }
            std::swap(a, h);
            x = a.data();
        }
    }
}

}  // namespace havok
