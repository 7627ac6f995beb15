#include "value_net.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cards.hpp"  // CoreError

namespace havok {

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

namespace {

// Four or eight floats (GCC's and Clang's vector extension: each lane's product and sum is the IEEE
// float operation, as if written one unit at a time), an SSE or an AVX register.
typedef float v4 __attribute__((vector_size(16)));
typedef float v8 __attribute__((vector_size(32)));

// Each row on its own, in float32 (as the network was fitted), every product and sum rounded as
// written (this file is compiled with -ffp-contract=off: no fused multiply-adds): a layer's unit j
// starts at its bias and adds x[i] * w[i][j] for each nonzero input i in increasing i, one rounded
// product and one rounded sum at a time; a hidden unit is then max(0, that). A zero input (or
// hidden unit) adds nothing and is skipped, so its order and its count are the row's own, never
// the batch's. The output's tanh is taken in double and rounded to float once.
template <typename V>
inline __attribute__((always_inline)) void forward(const std::vector<ValueNet::Layer>& layers, int widest,
                                                   const float* rows, size_t count, float* out) {
    // eight registers of units at a time (32 units with SSE, 64 with AVX2), held across the inputs:
    // eight independent sums in flight hide an addition's latency
    constexpr int LANES = sizeof(V) / sizeof(float), NV = 8, BLOCK = NV * LANES;
    std::vector<float> a(static_cast<size_t>(widest)), h(static_cast<size_t>(widest));
    std::vector<int> nz(static_cast<size_t>(widest));
    const int width = layers.front().in;
    for (size_t r = 0; r < count; ++r) {
        const float* x = rows + r * static_cast<size_t>(width);
        int k = 0;
        for (int i = 0; i < width; ++i)
            if (x[i] != 0.0f) nz[k++] = i;
        for (size_t l = 0; l < layers.size(); ++l) {
            const ValueNet::Layer& L = layers[l];
            float* o = h.data();
            // BLOCK units at a time, held in registers across the inputs: unit by unit the same
            // sums in the same order (the compiler's own vectorisation gathered across inputs)
            int j0 = 0;
            for (; j0 + BLOCK <= L.out; j0 += BLOCK) {
                V acc[NV];
                std::memcpy(acc, L.b.data() + j0, sizeof acc);
                for (int t = 0; t < k; ++t) {
                    const int i = nz[t];
                    V v;
                    for (int e = 0; e < LANES; ++e) v[e] = x[i];
                    const float* w = L.w.data() + static_cast<size_t>(i) * L.out + j0;
                    for (int u = 0; u < NV; ++u) {
                        V wu;
                        std::memcpy(&wu, w + LANES * u, sizeof wu);
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
            if (l + 1 == layers.size()) {
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

void forward_sse(const std::vector<ValueNet::Layer>& layers, int widest, const float* rows, size_t count,
                 float* out) {
    forward<v4>(layers, widest, rows, count, out);
}

// x86-64 machines with AVX2 run a copy compiled for it: the same operations, eight lanes to an
// instruction rather than four (about 1.4 times as fast here). Neither copy can fuse a multiply
// and an add (-ffp-contract=off, and no FMA target), so both give the same bits.
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVOK_AVX2 1
__attribute__((target("avx2"))) void forward_avx2(const std::vector<ValueNet::Layer>& layers, int widest,
                                                  const float* rows, size_t count, float* out) {
    forward<v8>(layers, widest, rows, count, out);
}
#endif

}  // namespace

void ValueNet::predict(const float* rows, size_t count, float* out) const {
#ifdef HAVOK_AVX2
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2 && !sse_only) return forward_avx2(layers_, widest_, rows, count, out);
#endif
    forward_sse(layers_, widest_, rows, count, out);
}

}  // namespace havok
