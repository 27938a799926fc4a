/// @file reduce_pair_test.cu
/// @brief The latency program's two-rank reduction (elementwise.cuh
/// reducePair: one packed __hadd2 per element pair for bf16 / fp16 Sum)
/// against its general one (WordAcc: fp32 accumulation, rounded once), for
/// every pair of 16-bit values, both types, every lane of a word, both
/// operand orders (Max and Min take WordAcc in both, nothing to compare). Results must be
/// bit-identical, except that a NaN may be any NaN. The H200 runs the sm_90
/// code; the sm_80 form (fma.rn.bf16x2) is compiled, not run. The collective tests
/// cannot catch a rounding difference: their inputs (multiples of 1/8) sum
/// exactly. Also the fp8 rounding of every reduction (elem.cuh fp8FromFloat:
/// the hardware's cvt.rn.satfinite with the out-of-range cases put back)
/// against CUDA's software __NV_NOSAT conversion for all 2^32 floats, and
/// the 32-bit integer forms that sm_80 and the host run (fp8FromFloatSoft,
/// fp8E4M3ToFloatSoft) likewise, and the group forms every vector and word
/// takes (toAccs, fromAccs). And the extremum of f16, bf16 and fp8 kept in a
/// packed 16-bit format (kPackedExtremum) against the fp32 path, for every
/// pair of operands. Prints PASS/FAIL per case; exits non-zero on any failure.
#include <cstdint>
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "atom_test_common.cuh"  // ATOMTEST_CK
#include "purlin/snac/elementwise.cuh"

namespace sn = purlin::snac;
using purlin::RedOp;

namespace {

/// True if the 16-bit value is a NaN of type E (bf16: 8 exponent bits; fp16: 5).
template <class E> __device__ bool isNan16(uint32_t v) {
  if constexpr (std::is_same_v<E, __half>) return (v & 0x7c00u) == 0x7c00u && (v & 0x03ffu) != 0;
  else return (v & 0x7f80u) == 0x7f80u && (v & 0x007fu) != 0;
}

struct Mismatch {
  unsigned long long count;
  uint32_t x, y, got, want;
};

/// Block x (0..65535) pairs value x with every value y: word X holds
/// {x, y, x, y} and word Y holds {y, x, y, x} (lanes low to high), so every
/// lane position and both operand orders are covered.
template <class E, purlin::OpFamily F> __global__ void pairKernel(Mismatch* m) {
  const uint64_t x = blockIdx.x;
  for (uint64_t y = threadIdx.x; y < 65536; y += blockDim.x) {
    const uint64_t X = x | (y << 16) | (x << 32) | (y << 48), Y = y | (x << 16) | (y << 32) | (x << 48);
    const uint64_t got = sn::reducePair<E, F>(X, Y, 0);
    sn::WordAcc<E, F> acc;
    acc.first(X);
    acc.next(Y, 0);
    const uint64_t want = acc.result(2, 0);
    for (int l = 0; l < 4; ++l) {
      const uint32_t g = uint32_t(got >> (16 * l)) & 0xffffu, w = uint32_t(want >> (16 * l)) & 0xffffu;
      const bool same = isNan16<E>(w) ? isNan16<E>(g) : g == w;
      if (!same && atomicAdd(&m->count, 1ull) == 0) {
        m->x = uint32_t(X >> (16 * l)) & 0xffffu;
        m->y = uint32_t(Y >> (16 * l)) & 0xffffu;
        m->got = g;
        m->want = w;
      }
    }
  }
}

template <class E, purlin::OpFamily F> bool run(const char* name, Mismatch* dm) {
  static_assert(sn::kReducePairPacked<E, F>, "the case must take reducePair's packed path, or it compares WordAcc with itself");
  ATOMTEST_CK(cudaMemset(dm, 0, sizeof(Mismatch)));
  pairKernel<E, F><<<65536, 256>>>(dm);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  Mismatch m{};
  ATOMTEST_CK(cudaMemcpy(&m, dm, sizeof m, cudaMemcpyDeviceToHost));
  if (m.count != 0) {
    std::printf("FAIL reducePair %s: %llu lanes differ from WordAcc; e.g. 0x%04x op 0x%04x = 0x%04x, WordAcc 0x%04x\n",
                name, m.count, m.x, m.y, m.got, m.want);
    return false;
  }
  std::printf("PASS reducePair %s: all 2^32 pairs bit-identical to WordAcc\n", name);
  return true;
}

/// fp8FromFloat (hardware conversion with the out-of-range cases put back;
/// Soft: the 32-bit integer form sm_80 and the host run)
/// against CUDA's software __NV_NOSAT conversion, for every float: block b
/// covers the 2^16 floats whose high 16 bits are b.
template <__nv_fp8_interpretation_t Kind, bool Soft> __global__ void fp8Kernel(Mismatch* m) {
  for (uint32_t lo = threadIdx.x; lo < 65536; lo += blockDim.x) {
    const uint32_t bitsIn = (uint32_t(blockIdx.x) << 16) | lo;
    const float a = __uint_as_float(bitsIn);
    const uint32_t got = Soft ? purlin::atom::fp8FromFloatSoft<Kind>(a) : purlin::atom::fp8FromFloat<Kind>(a);
    const uint32_t want = __nv_cvt_float_to_fp8(a, __NV_NOSAT, Kind);  // CUDA's software routine
    if (got != want && atomicAdd(&m->count, 1ull) == 0) {
      m->x = bitsIn;
      m->y = 0;
      m->got = got;
      m->want = want;
    }
  }
}

template <__nv_fp8_interpretation_t Kind, bool Soft> bool runFp8(const char* name, Mismatch* dm) {
  ATOMTEST_CK(cudaMemset(dm, 0, sizeof(Mismatch)));
  fp8Kernel<Kind, Soft><<<65536, 256>>>(dm);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  Mismatch m{};
  ATOMTEST_CK(cudaMemcpy(&m, dm, sizeof m, cudaMemcpyDeviceToHost));
  if (m.count != 0) {
    std::printf("FAIL fp8FromFloat%s %s: %llu floats differ from __NV_NOSAT; e.g. 0x%08x -> 0x%02x, software 0x%02x\n",
                Soft ? "Soft" : "", name, m.count, m.x, m.got, m.want);
    return false;
  }
  std::printf("PASS fp8FromFloat%s %s: all 2^32 floats bit-identical to the __NV_NOSAT conversion\n", Soft ? "Soft" : "",
              name);
  return true;
}

/// fp8E4M3ToFloatSoft against the hardware conversion (cvt.rn.f16x2.e4m3x2
/// on sm_90), for the 256 values: the same float, or both NaN.
__global__ void e4m3ToFloatKernel(Mismatch* m) {
  const uint32_t x = threadIdx.x;
  __nv_fp8_e4m3 e;
  e.__x = __nv_fp8_storage_t(x);
  const float want = float(e), got = purlin::atom::fp8E4M3ToFloatSoft(__nv_fp8_storage_t(x));
  const bool same = (want != want) ? (got != got) : __float_as_uint(got) == __float_as_uint(want);
  if (!same && atomicAdd(&m->count, 1ull) == 0) {
    m->x = x;
    m->y = 0;
    m->got = __float_as_uint(got);
    m->want = __float_as_uint(want);
  }
}

bool runE4M3ToFloat(Mismatch* dm) {
  ATOMTEST_CK(cudaMemset(dm, 0, sizeof(Mismatch)));
  e4m3ToFloatKernel<<<1, 256>>>(dm);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  Mismatch m{};
  ATOMTEST_CK(cudaMemcpy(&m, dm, sizeof m, cudaMemcpyDeviceToHost));
  if (m.count != 0) {
    std::printf("FAIL fp8E4M3ToFloatSoft: %llu of 256 values differ; e.g. 0x%02x -> 0x%08x, hardware 0x%08x\n", m.count,
                m.x, m.got, m.want);
    return false;
  }
  std::printf("PASS fp8E4M3ToFloatSoft: all 256 e4m3 values as the hardware converts them\n");
  return true;
}

/// The group conversions (elem.cuh toAccs / fromAccs: two fp8 elements per
/// instruction, the out-of-range ones put back behind one branch per
/// group) against the one-element ones. fromAccs, every float twice, each
/// result __NV_NOSAT's: thread g rounds the 16 floats g + k * 2^28 (k <
/// 16) as one vector (groups mixing signs, magnitudes, NaN and
/// out-of-range values: the slow path), and the 16 consecutive floats
/// 16g + k (mostly groups all in range: the paired conversion itself).
/// toAccs: every pair of fp8 values (x, y) as one two-lane group,
/// bit-identical to toAcc of each (or both NaN).
template <class E, bool Consecutive> __global__ void fp8GroupKernel(Mismatch* m) {
  constexpr __nv_fp8_interpretation_t Kind = purlin::atom::ElemTraits<E>::kKind;
  const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  float a[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) a[k] = __uint_as_float(Consecutive ? g * 16u + uint32_t(k) : g + (uint32_t(k) << 28));
  E e[16];
  purlin::atom::fromAccs<E>(a, e);
#pragma unroll
  for (int k = 0; k < 16; ++k) {
    const uint32_t got = e[k].__x, want = __nv_cvt_float_to_fp8(a[k], __NV_NOSAT, Kind);
    if (got != want && atomicAdd(&m->count, 1ull) == 0) {
      m->x = __float_as_uint(a[k]);
      m->y = uint32_t(k);
      m->got = got;
      m->want = want;
    }
  }
  if (!Consecutive && g < 65536) {  // toAccs: the pair (x, y) = (g & 255, g >> 8)
    E two[2];
    two[0].__x = __nv_fp8_storage_t(g & 255u);
    two[1].__x = __nv_fp8_storage_t(g >> 8);
    float f[2];
    purlin::atom::toAccs<E>(two, f);
    for (int i = 0; i < 2; ++i) {
      const float want = purlin::atom::toAcc(two[i]);
      const bool same = (want != want) ? (f[i] != f[i]) : __float_as_uint(f[i]) == __float_as_uint(want);
      if (!same && atomicAdd(&m->count, 1ull) == 0) {
        m->x = g;
        m->y = 0x100u + uint32_t(i);
        m->got = __float_as_uint(f[i]);
        m->want = __float_as_uint(want);
      }
    }
  }
}

template <class E> bool runFp8Group(const char* name, Mismatch* dm) {
  ATOMTEST_CK(cudaMemset(dm, 0, sizeof(Mismatch)));
  fp8GroupKernel<E, false><<<(1u << 28) / 256, 256>>>(dm);
  fp8GroupKernel<E, true><<<(1u << 28) / 256, 256>>>(dm);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  Mismatch m{};
  ATOMTEST_CK(cudaMemcpy(&m, dm, sizeof m, cudaMemcpyDeviceToHost));
  if (m.count != 0) {
    if (m.y >= 0x100u)
      std::printf("FAIL toAccs %s: %llu values differ; e.g. pair 0x%04x lane %u -> 0x%08x, toAcc 0x%08x\n", name,
                  m.count, m.x, m.y - 0x100u, m.got, m.want);
    else
      std::printf("FAIL fromAccs %s: %llu floats differ from __NV_NOSAT; e.g. 0x%08x (lane %u) -> 0x%02x, software 0x%02x\n",
                  name, m.count, m.x, m.y, m.got, m.want);
    return false;
  }
  std::printf("PASS fromAccs/toAccs %s: all 2^32 floats in mixed and in consecutive 16-lane groups as __NV_NOSAT; all 2^16 pairs as toAcc\n",
              name);
  return true;
}

/// The extremum kept packed (elem.cuh kPackedExtremum: f16 and bf16 in
/// their own format, fp8 widened to f16) against the fp32 path of the op
/// (referenceReduce: toAcc, fmaxf / fminf, fromAcc), for every pair of
/// values of E: block x pairs x with every y, word X = {x, y, x, y, ...}
/// and Y = {y, x, y, x, ...} (every lane, both operand orders), through
/// WordAcc (the latency program's words) and through vecLoad /
/// vecAccumulate / vecStore (the 16-byte vectors of Atom::reduce and the
/// direct program); and every value alone (n = 1: a NaN made canonical).
/// Bit-identical, NaN encodings included. m->y's bit 31: the vector form;
/// bit 30: min; bit 29: one contribution. `packed` tells whether the
/// packed form ran.
struct PackedMismatch {
  Mismatch m;
  int packed;
};
template <class E> __global__ void packedExtremumKernel(PackedMismatch* pm) {
  namespace at = purlin::atom;
  constexpr purlin::OpFamily F = purlin::OpFamily::Extremum;
  constexpr int kBits = 8 * int(sizeof(E)), kLanes = 8 / int(sizeof(E));
  constexpr uint64_t kValues = uint64_t(1) << kBits, kMask = kValues - 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) pm->packed = sn::WordAcc<E, F>::kPacked && at::VecAcc<E, F>::kPacked;
  const uint64_t x = blockIdx.x;
  for (uint64_t y = threadIdx.x; y < kValues; y += blockDim.x) {
    uint64_t X = 0, Y = 0;
    for (int l = 0; l < kLanes; ++l) {
      X |= (l % 2 ? y : x) << (kBits * l);
      Y |= (l % 2 ? x : y) << (kBits * l);
    }
    for (int variant = 0; variant < 2; ++variant) {
      sn::WordAcc<E, F> acc;
      acc.first(X);
      acc.next(Y, variant);
      const uint64_t word = acc.result(2, variant);
      at::VecAcc<E, F> vacc;
      at::vecLoad<E, F>(vacc, make_uint4(uint32_t(X), uint32_t(X >> 32), uint32_t(Y), uint32_t(Y >> 32)));
      at::vecAccumulate<E, F>(vacc, make_uint4(uint32_t(Y), uint32_t(Y >> 32), uint32_t(X), uint32_t(X >> 32)), variant);
      const uint4 vec = at::vecStore<E, F>(vacc, 2, variant);
      const uint64_t vecWords[2] = {uint64_t(vec.x) | uint64_t(vec.y) << 32, uint64_t(vec.z) | uint64_t(vec.w) << 32};
      for (int form = 0; form < 3; ++form) {  // the word; the vector's low and high words
        const uint64_t got = form == 0 ? word : vecWords[form - 1], first = form == 2 ? Y : X, second = form == 2 ? X : Y;
        for (int l = 0; l < kLanes; ++l) {
          E ops[2];
          const uint64_t a = (first >> (kBits * l)) & kMask, b = (second >> (kBits * l)) & kMask;
          memcpy(&ops[0], &a, sizeof(E));
          memcpy(&ops[1], &b, sizeof(E));
          const E r = variant ? at::referenceReduce<E, RedOp::Min>(ops, 2) : at::referenceReduce<E, RedOp::Max>(ops, 2);
          uint64_t want = 0;
          memcpy(&want, &r, sizeof(E));
          const uint64_t g = (got >> (kBits * l)) & kMask;
          if (g != want && atomicAdd(&pm->m.count, 1ull) == 0) {
            pm->m.x = uint32_t(a);
            pm->m.y = uint32_t(b) | (form != 0 ? 1u << 31 : 0u) | (variant ? 1u << 30 : 0u);
            pm->m.got = uint32_t(g);
            pm->m.want = uint32_t(want);
          }
        }
      }
    }
    if (x == 0) {  // one contribution (n = 1): y itself, a NaN made canonical as the fp32 path makes it
      uint64_t Y1 = 0;
      for (int l = 0; l < kLanes; ++l) Y1 |= y << (kBits * l);
      E op;
      memcpy(&op, &y, sizeof(E));
      const E r = at::referenceReduce<E, RedOp::Max>(&op, 1);
      uint64_t want = 0;
      memcpy(&want, &r, sizeof(E));
      sn::WordAcc<E, F> acc;
      acc.first(Y1);
      at::VecAcc<E, F> vacc;
      at::vecLoad<E, F>(vacc, make_uint4(uint32_t(Y1), uint32_t(Y1 >> 32), uint32_t(Y1), uint32_t(Y1 >> 32)));
      const uint4 vec = at::vecStore<E, F>(vacc, 1, 0);
      const uint64_t got[2] = {acc.result(1, 0), uint64_t(vec.x) | uint64_t(vec.y) << 32};
      for (int form = 0; form < 2; ++form)
        for (int l = 0; l < kLanes; ++l) {
          const uint64_t g = (got[form] >> (kBits * l)) & kMask;
          if (g != want && atomicAdd(&pm->m.count, 1ull) == 0) {
            pm->m.x = uint32_t(y);
            pm->m.y = (form != 0 ? 1u << 31 : 0u) | (1u << 29);
            pm->m.got = uint32_t(g);
            pm->m.want = uint32_t(want);
          }
        }
    }
  }
}

template <class E> bool runPackedExtremum(const char* name, PackedMismatch* dpm) {
  ATOMTEST_CK(cudaMemset(dpm, 0, sizeof(PackedMismatch)));
  packedExtremumKernel<E><<<1u << (8 * sizeof(E)), 256>>>(dpm);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  PackedMismatch pm{};
  ATOMTEST_CK(cudaMemcpy(&pm, dpm, sizeof pm, cudaMemcpyDeviceToHost));
  if (!pm.packed) {
    std::printf("FAIL packed extremum %s: the packed form did not run (kPackedExtremum false on this device)\n", name);
    return false;
  }
  if (pm.m.count != 0) {
    if (pm.m.y >> 29 & 1u)
      std::printf("FAIL packed extremum %s: %llu lanes differ from the fp32 path; e.g. one contribution 0x%x -> 0x%x (%s), fp32 path 0x%x\n",
                  name, pm.m.count, pm.m.x, pm.m.got, (pm.m.y >> 31) ? "vector" : "word", pm.m.want);
    else
      std::printf("FAIL packed extremum %s: %llu lanes differ from the fp32 path; e.g. %s(0x%x, 0x%x) = 0x%x (%s), fp32 path 0x%x\n",
                  name, pm.m.count, (pm.m.y >> 30 & 1u) ? "min" : "max", pm.m.x, pm.m.y & 0x1fffffffu, pm.m.got,
                  (pm.m.y >> 31) ? "vector" : "word", pm.m.want);
    return false;
  }
  std::printf("PASS packed extremum %s: max and min of all %s pairs and every single value bit-identical to the fp32 path, words and vectors\n",
              name, sizeof(E) == 1 ? "2^16" : "2^32");
  return true;
}

} // namespace

int main() {
  int ngpu = 0;
  if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) {
    std::printf("FAIL reduce_pair_test: no CUDA device\n");
    return 1;
  }
  Mismatch* dm = nullptr;
  if (cudaMalloc(&dm, sizeof(Mismatch)) != cudaSuccess) {
    std::printf("FAIL reduce_pair_test: cudaMalloc\n");
    return 1;
  }
  bool ok = true;
  ok &= run<__nv_bfloat16, purlin::OpFamily::Sum>("bf16 sum", dm);
  ok &= run<__half, purlin::OpFamily::Sum>("fp16 sum", dm);
  ok &= runFp8<__NV_E4M3, false>("e4m3", dm);
  ok &= runFp8<__NV_E5M2, false>("e5m2", dm);
  ok &= runFp8<__NV_E4M3, true>("e4m3", dm);
  ok &= runFp8<__NV_E5M2, true>("e5m2", dm);
  ok &= runE4M3ToFloat(dm);
  ok &= runFp8Group<__nv_fp8_e4m3>("e4m3", dm);
  ok &= runFp8Group<__nv_fp8_e5m2>("e5m2", dm);
  PackedMismatch* dpm = nullptr;
  if (cudaMalloc(&dpm, sizeof(PackedMismatch)) != cudaSuccess) {
    std::printf("FAIL reduce_pair_test: cudaMalloc\n");
    return 1;
  }
  ok &= runPackedExtremum<__half>("f16", dpm);
  ok &= runPackedExtremum<__nv_bfloat16>("bf16", dpm);
  ok &= runPackedExtremum<__nv_fp8_e4m3>("e4m3", dpm);
  ok &= runPackedExtremum<__nv_fp8_e5m2>("e5m2", dpm);
  cudaFree(dpm);
  cudaFree(dm);
  std::printf("%s reduce_pair_test\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
