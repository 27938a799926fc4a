#include <initializer_list>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cfloat>
#include <thread>
#include <atomic>
static inline float divNew(float a, double y, double nd) {
  const double ad = a;
  const double q = ad * y;
  const double r = std::fma(-q, nd, ad);
  return float((r == 0.0 || !(std::fabs(q) <= DBL_MAX)) ? q : std::fma(r, y, q));
}
int main() {
  std::atomic<long> bad{0};
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8}) {
    const double y = 1.0 / double(n), nd = double(n);
    const float nf = float(n);
    auto work = [&](uint64_t lo, uint64_t hi) {
      long b = 0; long shown = 0;
      for (uint64_t u = lo; u < hi; ++u) {
        uint32_t bits = uint32_t(u); float a; std::memcpy(&a, &bits, 4);
        const float want = a / nf, got = divNew(a, y, nd);
        uint32_t wb, gb; std::memcpy(&wb, &want, 4); std::memcpy(&gb, &got, 4);
        if (wb != gb && !(want != want && got != got)) { ++b; if (shown++ < 3) printf("n=%d a=%a want=%a got=%a\n", n, a, want, got); }
      }
      bad += b;
    };
    std::thread t1(work, 0, 1ull << 31), t2(work, 1ull << 31, 1ull << 32);
    t1.join(); t2.join();
    printf("n=%d bad so far %ld\n", n, bad.load());
  }
  return bad != 0;
}
