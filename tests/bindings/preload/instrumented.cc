// Built with -finstrument-functions and without -rdynamic: the preload library names these
// functions from the executable's symbol table, demangled. test_preload.py checks the nesting.
#include <cstdio>
#include <cstdlib>

namespace model {

struct Layer {
  int width;
  long Forward(int input) const;
};

long Layer::Forward(int input) const {
  long total = 0;
  for (int index = 0; index < width; ++index) total += input * index;
  return total;
}

}  // namespace model

static long Fibonacci(int n) { return n < 2 ? n : Fibonacci(n - 1) + Fibonacci(n - 2); }

extern "C" long train_step(int step) {
  model::Layer layer{64};
  return layer.Forward(step) + Fibonacci(5);
}

int main(int argc, char **argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 4;
  long sum = 0;
  for (int step = 0; step < steps; ++step) sum += train_step(step);
  std::printf("%ld\n", sum);
  return 0;
}
