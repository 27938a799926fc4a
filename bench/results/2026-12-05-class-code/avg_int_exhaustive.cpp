#include <initializer_list>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <atomic>
static inline int32_t divNew(int32_t x, double y) {
  const double m = std::fma(std::fabs(double(x)), y, 0x1p-10);
  const int32_t q = int32_t(int64_t(m));
  return x < 0 ? -q : q;
}
int main() {
  std::atomic<long> bad{0};
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8}) {
    const double y = 1.0 / double(n);
    auto work = [&](int64_t lo, int64_t hi) {
      long b = 0;
      for (int64_t u = lo; u < hi; ++u) {
        const int32_t x = int32_t(u);
        if (x / n != divNew(x, y)) { if (b++ < 3) printf("n=%d x=%d\n", n, x); }
      }
      bad += b;
    };
    std::thread t1(work, INT32_MIN, 0), t2(work, 0, int64_t(INT32_MAX) + 1);
    t1.join(); t2.join();
    printf("n=%d bad so far %ld\n", n, bad.load());
  }
  return bad != 0;
}
