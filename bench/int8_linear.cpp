// Weight-only int8 matrix product for the int8 copy: a trial kept in bench/, not used by the app (bench/int8_native.py
// says why it was built and why it was not shipped):
// y[m, n] = scale[n] * sum_k x[m, k] * w[n, k]; x fp32 [M, K], w int8 [N, K], scale fp32 [N], y fp32 [M, N].
// A tile of NB weight rows x MB input rows keeps NB * MB independent fp32 accumulators (so the FMA latency is
// hidden), widens each 16 int8 weights to fp32 once for all MB input rows, and reads every weight once per call.
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <immintrin.h>

constexpr int64_t PREFETCH_TILES = 2;

template <int NB, int MB>
static inline void tile(const float* x, const int8_t* w, const float* scale, float* y, int64_t K, int64_t N) {
  __m512 acc[NB][MB];
  for (int i = 0; i < NB; ++i)
    for (int j = 0; j < MB; ++j) acc[i][j] = _mm512_setzero_ps();
  // The NB rows of the next tiles are contiguous: prefetch them over this tile's k loop (NB * 16 bytes per step),
  // so memory streams while this tile computes (without it a thread reaches about half the fp32 read rate).
  const char* ahead = reinterpret_cast<const char*>(w) + PREFETCH_TILES * NB * K;
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    for (int p = 0; p < NB * 16; p += 64) _mm_prefetch(ahead + k * NB + p, _MM_HINT_T0);
    __m512 xv[MB];
    for (int j = 0; j < MB; ++j) xv[j] = _mm512_loadu_ps(x + j * K + k);
    for (int i = 0; i < NB; ++i) {
      __m512 wv = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)(w + i * K + k))));
      for (int j = 0; j < MB; ++j) acc[i][j] = _mm512_fmadd_ps(xv[j], wv, acc[i][j]);
    }
  }
  for (int i = 0; i < NB; ++i)
    for (int j = 0; j < MB; ++j) {
      float sum = _mm512_reduce_add_ps(acc[i][j]);
      for (int64_t t = k; t < K; ++t) sum += x[j * K + t] * (float)w[i * K + t];  // K not a multiple of 16
      y[j * N + i] = scale[i] * sum;
    }
}

// Weight rows [begin, end): each tile of NB of them is multiplied with every block of up to 4 input rows while it is
// still in L1, so a call reads the weights from memory once whatever M is.
template <int NB>
static void rows(const float* x, const int8_t* w, const float* scale, float* y, int64_t M, int64_t K, int64_t N,
                 int64_t begin, int64_t end) {
  for (int64_t n = begin; n < end; n += NB) {
    const int64_t nb = std::min<int64_t>(NB, end - n);
    for (int64_t m = 0; m < M; m += 4) {
      const float* xm = x + m * K;
      float* ym = y + m * N + n;
      const int64_t mb = std::min<int64_t>(4, M - m);
      if (nb == NB) {
        switch (mb) {
          case 1: tile<NB, 1>(xm, w + n * K, scale + n, ym, K, N); break;
          case 2: tile<NB, 2>(xm, w + n * K, scale + n, ym, K, N); break;
          case 3: tile<NB, 3>(xm, w + n * K, scale + n, ym, K, N); break;
          default: tile<NB, 4>(xm, w + n * K, scale + n, ym, K, N); break;
        }
      } else {
        for (int64_t i = 0; i < nb; ++i)
          for (int64_t j = 0; j < mb; ++j) tile<1, 1>(xm + j * K, w + (n + i) * K, scale + n + i, ym + j * N + i, K, N);
      }
    }
  }
}

torch::Tensor int8_linear(torch::Tensor x, torch::Tensor w, torch::Tensor scale) {
  TORCH_CHECK(x.dim() == 2 && x.dtype() == torch::kFloat, "x: 2-d fp32");
  TORCH_CHECK(w.dim() == 2 && w.dtype() == torch::kChar && w.is_contiguous() && w.size(1) == x.size(1),
              "w: int8 [N, K]");
  TORCH_CHECK(scale.dtype() == torch::kFloat && scale.is_contiguous() && scale.numel() == w.size(0),
              "scale: fp32 [N]");
  x = x.contiguous();
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* xp = x.data_ptr<float>();
  const int8_t* wp = w.data_ptr<int8_t>();
  const float* sp = scale.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  constexpr int64_t NB = 8;  // 8 weight rows x 1 input row = 8 accumulators; x 4 input rows = 32 (zmm0-31)
  const int64_t tiles = (N + NB - 1) / NB;
  at::parallel_for(0, tiles, std::max<int64_t>(1, 16384 / (K * NB)), [&](int64_t b, int64_t e) {
    if (M == 1) rows<8>(xp, wp, sp, yp, M, K, N, b * NB, std::min(N, e * NB));
    else rows<4>(xp, wp, sp, yp, M, K, N, b * NB, std::min(N, e * NB));
  });
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("int8_linear", &int8_linear); }
