// The luck correction's value network (agents/value.py, ValueModel): ReLU hidden layers and
// one output, whose tanh is a seat's value. Its forward pass is here rather than in a BLAS so that
// it gives the same bits on every machine, at every thread count and whatever the batch: each row
// is valued on its own, in a fixed order of operations (value_net.cpp), and the feature rows are
// sparse enough that skipping their zeros is cheaper than a dense product.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace havok {

class ValueNet {
public:
    // weights[l] is layer l's (inputs x outputs) matrix, row-major, shapes[l] = {inputs, outputs};
    // biases[l] has one entry per output. CoreError where the layers do not chain, the last does
    // not have one output, or a number is not finite.
    ValueNet(std::vector<std::vector<float>> weights, std::vector<std::vector<float>> biases,
             const std::vector<std::pair<int, int>>& shapes);
    int inputs() const { return layers_.front().in; }
    // The values (in [-1, 1]) of ``count`` rows of inputs() floats each, row-major.
    void predict(const float* rows, size_t count, float* out) const;
    // the four-lane code even where the machine has AVX2 (the tests compare the two)
    bool sse_only = false;

    struct Layer {
        int in = 0, out = 0;
        std::vector<float> w, b;
    };

private:
    std::vector<Layer> layers_;
    int widest_ = 0;  // the most units of any layer, inputs included
};

}  // namespace havok
