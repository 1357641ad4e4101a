// The serial and OpenMP baselines of bench/host_kernels/suite.dsp (baselines.h): the same arithmetic as
// each kernel, in the same order per element, written as a C++ programmer would write the loop.
#include "baselines.h"

#include <algorithm>
#include <vector>

namespace baselines {

namespace {

// `#pragma omp parallel for` on the loop when the form asks for it: one body for both forms.
template <class Body>
void rows(Form form, int count, Body body) {
  if (form == Form::OpenMP) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < count; ++i) body(i);
  } else {
    for (int i = 0; i < count; ++i) body(i);
  }
}

}  // namespace

void fdtd2d(Form form, float* ex, float* ey, float* hz, float fict, int nx, int ny) {
  rows(form, nx, [&](int i) {
    for (int j = 0; j < ny; ++j)
      ey[i * ny + j] = i == 0 ? fict : ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
  });
  rows(form, nx, [&](int i) {
    for (int j = 1; j < ny; ++j)
      ex[i * (ny + 1) + j] = ex[i * (ny + 1) + j] - 0.5f * (hz[i * ny + j] - hz[i * ny + (j - 1)]);
  });
  rows(form, nx - 1, [&](int i) {
    for (int j = 0; j < ny - 1; ++j)
      hz[i * ny + j] = hz[i * ny + j] - 0.7f * (ex[i * (ny + 1) + (j + 1)] - ex[i * (ny + 1) + j] +
                                                ey[(i + 1) * ny + j] - ey[i * ny + j]);
  });
}

void srad(Form form, const float* J, float* C, float* N, float* S, float* W, float* E, int rows_, int cols,
          float q0sqr) {
  rows(form, rows_, [&](int r) {
    for (int c = 0; c < cols; ++c) {
      const int index = r * cols + c;
      const float jc = J[index];
      const float n = J[(r == 0 ? r : r - 1) * cols + c] - jc;
      const float s = J[(r == rows_ - 1 ? r : r + 1) * cols + c] - jc;
      const float w = J[r * cols + (c == 0 ? c : c - 1)] - jc;
      const float e = J[r * cols + (c == cols - 1 ? c : c + 1)] - jc;
      const float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
      const float l = (n + s + w + e) / jc;
      const float num = (0.5 * g2) - ((1.0 / 16.0) * (l * l));
      float den = 1 + (.25 * l);
      const float qsqr = num / (den * den);
      den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
      const float coefficient = 1.0 / (1.0 + den);
      C[index] = coefficient < 0 ? 0 : (coefficient > 1 ? 1 : coefficient);
      N[index] = n;
      S[index] = s;
      W[index] = w;
      E[index] = e;
    }
  });
}

void matmul(Form form, const float* A, const float* B, float* C, int n) {
  rows(form, n, [&](int i) {
    float* row = C + i * n;
    std::fill(row, row + n, 0.0f);
    for (int k = 0; k < n; ++k) {
      const float a = A[i * n + k];
      for (int j = 0; j < n; ++j) row[j] += a * B[k * n + j];
    }
  });
}

void histogram(Form form, const unsigned char* data, unsigned* bins, int n) {
  std::fill(bins, bins + 256, 0u);
  if (form == Form::Serial) {
    for (int i = 0; i < n; ++i) ++bins[data[i]];
    return;
  }
#pragma omp parallel
  {
    unsigned local[256] = {};
#pragma omp for schedule(static) nowait
    for (int i = 0; i < n; ++i) ++local[data[i]];
    for (int b = 0; b < 256; ++b)
      if (local[b] != 0) {
#pragma omp atomic
        bins[b] += local[b];
      }
  }
}

void segmentScan(Form form, const int* in, int* out, int n, int segment) {
  rows(form, n / segment, [&](int s) {
    int running = 0;
    for (int i = s * segment; i < (s + 1) * segment; ++i) {
      out[i] = running;
      running += in[i];
    }
  });
}

void segmentSum(Form form, const float* in, float* out, int n, int segment) {
  rows(form, n / segment, [&](int s) {
    float sum = 0.0f;
    for (int i = s * segment; i < (s + 1) * segment; ++i) sum += in[i];
    out[s] = sum;
  });
}

void saxpy(Form form, float* y, const float* x, float a, int n) {
  if (form == Form::OpenMP) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
  } else {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
  }
}

}  // namespace baselines
