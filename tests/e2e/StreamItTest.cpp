// The StreamIt-style examples (examples/streamit): each compiled with the real disparcc, run under
// mpiexec with one rank per VNODE instance and again with every instance in one rank, its printed
// checksum compared with the same signal processing computed here sequentially, written independently
// of the examples (plain loops, no pipes).
#include "GroupingMap.h"
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <regex>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::string kSourceDir = DISPAR_SOURCE_DIR;
constexpr float kPi = 3.14159265f;

// Builds and runs examples/streamit/<name>.dsp; returns the number after `key=` in its output.
double runExample(const std::string& name, const std::string& key, std::string* output = nullptr) {
  ScratchDir dir;
  dir.write(name + ".dsp", readFile(kSourceDir + "/examples/streamit/" + name + ".dsp"));
  const ProcessResult built = runProcess({kDisparcc, name + ".dsp", "-o", name}, dir.path());
  EXPECT_EQ(built.status, 0) << built.output;
  lang::Rtg rtg;
  std::string error;
  EXPECT_TRUE(lang::parseRtgJson(readFile(dir.file(name + ".rtg.json")), rtg, error)) << error;
  const ProcessResult ran =
      runProcess({kMpiexec, "-launcher", "fork", "-n", std::to_string(rtg.vertices.size()), "./" + name}, dir.path());
  EXPECT_EQ(ran.status, 0) << ran.output;
  if (output) *output = ran.output;
  std::smatch match;
  if (!std::regex_search(ran.output, match, std::regex(key + "=(-?[0-9.]+)"))) {
    ADD_FAILURE() << "no '" << key << "=' in:\n" << ran.output;
    return NAN;
  }
  // Grouped: every instance in one rank, in-memory links instead of MPI: the same line.
  std::vector<std::vector<int>> one(1);
  for (std::size_t i = 0; i < rtg.vertices.size(); ++i) one[0].push_back(static_cast<int>(i));
  dir.write("one.map.json", mapFile(name, rtg, one));
  const ProcessResult grouped = runProcess({kMpiexec, "-launcher", "fork", "-n", "1", "./" + name}, dir.path(),
                                           {"DISPAR_MAPPING=" + dir.file("one.map.json")});
  EXPECT_EQ(grouped.status, 0) << grouped.output;
  EXPECT_NE(grouped.output.find(match[0].str()), std::string::npos)
      << "one rank per instance printed " << match[0] << ", grouped in one rank:\n"
      << grouped.output;
  return std::stod(match[1]);
}

// A windowed-sinc FIR, as a plain dot product over the newest `taps.size()` samples at each position.
std::vector<float> fir(const std::vector<float>& x, const std::vector<float>& taps, int step) {
  std::vector<float> y;
  for (std::size_t start = 0; start + taps.size() <= x.size(); start += static_cast<std::size_t>(step)) {
    float sum = 0;
    for (std::size_t k = 0; k < taps.size(); ++k) sum += taps[k] * x[start + k];
    y.push_back(sum);
  }
  return y;
}

// The DFT of `x` at `bin`.
std::complex<double> dft(const std::vector<double>& x, int bin) {
  std::complex<double> sum = 0;
  for (std::size_t n = 0; n < x.size(); ++n)
    sum += x[n] * std::polar(1.0, -2 * M_PI * bin * static_cast<double>(n) / static_cast<double>(x.size()));
  return sum;
}

float hamming(int k, int taps) { return 0.54f - 0.46f * std::cos(2 * kPi * k / (taps - 1)); }

TEST(StreamIt, FftMatchesADirectDft) {
  constexpr int kPoints = 64, kFrames = 16;
  double checksum = 0;
  for (int f = 0; f < kFrames; ++f) {
    for (int k = 0; k < kPoints; ++k) {
      std::complex<double> bin = 0;
      for (int n = 0; n < kPoints; ++n) {
        const double x = std::cos(2.0f * kPi * 3 * n / kPoints) + 0.5f * std::sin(2.0f * kPi * (7 + f) * n / kPoints);
        bin += x * std::polar(1.0, -2 * M_PI * k * n / kPoints);
      }
      checksum += (k + 1) * bin.real() + (k + 2) * bin.imag();
    }
  }
  std::string output;
  const double got = runExample("fft", "checksum", &output);
  EXPECT_NEAR(got, checksum, 1e-4 * std::abs(checksum) + 0.05) << output;
  EXPECT_NE(output.find("fft: frames=16 "), std::string::npos) << output;
  EXPECT_NE(output.find("bin 3 = 32.0000 +0.0000i"), std::string::npos) << output;  // cos(2 pi 3 n / 64)
}

TEST(StreamIt, FmRadioMatchesASequentialRun) {
  constexpr int kSamples = 40000, kTaps = 32, kBands = 4;
  auto lowPass = [&](float cutoff) {
    std::vector<float> taps(kTaps);
    for (int k = 0; k < kTaps; ++k) {
      const float m = k - (kTaps - 1) / 2.0f;
      taps[k] = (m == 0 ? 2 * cutoff : std::sin(2 * kPi * cutoff * m) / (kPi * m)) * hamming(k, kTaps);
    }
    return taps;
  };
  std::vector<float> antenna;
  float phase = 0;
  for (int n = 0; n < kSamples; ++n) {
    phase += 0.3f + 0.1f * std::sin(0.002f * n) + 0.05f * std::sin(0.011f * n);
    antenna.push_back(std::cos(phase));
  }
  const std::vector<float> baseband = fir(antenna, lowPass(0.1f), 4);
  std::vector<float> audio;
  for (std::size_t n = 0; n + 1 < baseband.size(); ++n)
    audio.push_back(2.0f * std::atan(baseband[n] * baseband[n + 1]));
  std::vector<float> speaker;
  for (int b = 0; b < kBands; ++b) {
    const std::vector<float> high = lowPass(0.02f * (b + 2)), low = lowPass(0.02f * (b + 1));
    std::vector<float> band(kTaps);
    for (int k = 0; k < kTaps; ++k) band[k] = high[k] - low[k];
    const std::vector<float> y = fir(audio, band, 1);
    if (b == 0) speaker.assign(y.size(), 0.0f);
    for (std::size_t n = 0; n < y.size(); ++n) speaker[n] += (1.0f + 0.5f * b) * y[n];
  }
  double checksum = 0;
  for (std::size_t n = 0; n < speaker.size(); ++n) checksum += (1 + n % 7) * speaker[n];
  std::string output;
  const double got = runExample("fmradio", "checksum", &output);
  EXPECT_NEAR(got, checksum, 1e-4 * std::abs(checksum) + 1e-3) << output;
  EXPECT_NE(output.find("samples=" + std::to_string(speaker.size()) + " "), std::string::npos) << output;
}

TEST(StreamIt, FilterBankMatchesASequentialRun) {
  constexpr int kBranches = 4, kTaps = 24, kSamples = 8192;
  auto bandTaps = [&](int branch, float scale) {
    std::vector<float> taps(kTaps);
    const float low = 0.5f * branch / kBranches, high = 0.5f * (branch + 1) / kBranches;
    for (int k = 0; k < kTaps; ++k) {
      const float m = k - (kTaps - 1) / 2.0f;
      const float ideal =
          m == 0 ? 2 * (high - low) : (std::sin(2 * kPi * high * m) - std::sin(2 * kPi * low * m)) / (kPi * m);
      taps[k] = scale * ideal * hamming(k, kTaps);
    }
    return taps;
  };
  std::vector<float> input;
  for (int n = 0; n < kSamples; ++n) input.push_back(std::sin(0.01f * n) + 0.25f * std::cos(0.37f * n));
  std::vector<float> output;
  for (int b = 0; b < kBranches; ++b) {
    const std::vector<float> decimated = fir(input, bandTaps(b, 1.0f), kBranches);
    // Expand with zeros, then filter over a history that starts as kTaps zeros.
    std::vector<float> expanded(kTaps - 1, 0.0f);
    for (float x : decimated)
      for (int phase = 0; phase < kBranches; ++phase) expanded.push_back(phase == 0 ? x : 0.0f);
    const std::vector<float> y = fir(expanded, bandTaps(b, float(kBranches)), 1);
    if (b == 0) output.assign(y.size(), 0.0f);
    for (std::size_t n = 0; n < y.size(); ++n) output[n] += y[n];
  }
  double checksum = 0;
  for (std::size_t n = 0; n < output.size(); ++n) checksum += (1 + n % 5) * output[n];
  std::string out;
  const double got = runExample("filterbank", "checksum", &out);
  EXPECT_NEAR(got, checksum, 1e-4 * std::abs(checksum) + 1e-3) << out;
  EXPECT_NE(out.find("samples=" + std::to_string(output.size()) + " "), std::string::npos) << out;
}

TEST(StreamIt, ChannelVocoderMatchesASequentialRun) {
  constexpr int kSamples = 16384, kTaps = 32, kBands = 4, kWindow = 256, kMinLag = 20, kMaxLag = 120;
  auto bandPass = [&](double low, double high) {
    std::vector<double> taps(kTaps);
    for (int k = 0; k < kTaps; ++k) {
      const double m = k - (kTaps - 1) / 2.0;
      const double ideal =
          m == 0 ? 2 * (high - low) : (std::sin(2 * M_PI * high * m) - std::sin(2 * M_PI * low * m)) / (M_PI * m);
      taps[static_cast<std::size_t>(k)] = ideal * (0.54 - 0.46 * std::cos(2 * M_PI * k / (kTaps - 1)));
    }
    return taps;
  };
  // A plain FIR over the newest kTaps samples at each position.
  auto filter = [&](const std::vector<double>& x, const std::vector<double>& taps) {
    std::vector<double> y;
    for (std::size_t start = 0; start + kTaps <= x.size(); ++start) {
      double sum = 0;
      for (std::size_t k = 0; k < kTaps; ++k) sum += taps[k] * x[start + k];
      y.push_back(sum);
    }
    return y;
  };
  std::vector<double> voice;
  for (int n = 0; n < kSamples; ++n)
    voice.push_back(std::sin(2 * M_PI * n / 80.0) * (1 + 0.5 * std::sin(0.002 * n)) +
                    0.4 * std::sin(2 * M_PI * 0.31 * n));
  const std::vector<double> filtered = filter(voice, bandPass(0.0, 0.25));
  std::vector<std::vector<double>> bands;
  for (int b = 0; b < kBands; ++b)
    bands.push_back(filter(filtered, bandPass(0.25 * b / kBands, 0.25 * (b + 1) / kBands)));
  const std::size_t windows = std::min(filtered.size(), bands[0].size()) / kWindow;
  double checksum = 0;
  for (std::size_t w = 0; w < windows; ++w) {
    int best = kMinLag;
    double bestValue = -1e300;
    for (int lag = kMinLag; lag <= kMaxLag; ++lag) {
      double value = 0;
      for (std::size_t n = 0; n + static_cast<std::size_t>(lag) < kWindow; ++n)
        value += filtered[w * kWindow + n] * filtered[w * kWindow + n + static_cast<std::size_t>(lag)];
      if (value > bestValue) {
        bestValue = value;
        best = lag;
      }
    }
    checksum += best;
    for (int b = 0; b < kBands; ++b) {
      double sum = 0;
      for (std::size_t n = 0; n < kWindow; ++n) sum += std::abs(bands[static_cast<std::size_t>(b)][w * kWindow + n]);
      checksum += (b + 1) * 100 * (sum / kWindow);
    }
  }
  std::string out;
  const double got = runExample("vocoder", "checksum", &out);
  EXPECT_NEAR(got, checksum, 1e-6 * std::abs(checksum) + 1e-3) << out;
  EXPECT_NE(out.find("vocoder: windows=" + std::to_string(windows) + " "), std::string::npos) << out;
}

TEST(StreamIt, FhrFeedbackLoopFollowsTheHops) {
  // The receiver's loop, sequentially: mix each block down with the channel decided after the previous
  // one (channel 0 first), take the data bin's magnitude, decide the next channel from the pilot bins.
  constexpr int kN = 256, kBlocks = 64, kChannels = 4, kSpacing = 16, kDataBin = 10, kPilotBin = 20;
  auto channelOf = [](int block) { return (block * 3 + block / 2) % kChannels; };
  double checksum = 0;
  int decided = 0, followed = 0;
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<double> y(kN);
    for (int n = 0; n < kN; ++n) {
      const int carrier = channelOf(b) * kSpacing;
      const double x = std::cos(2 * M_PI * (carrier + kDataBin) * n / kN) +
                       0.5 * std::cos(2 * M_PI * (carrier + kPilotBin + channelOf(b + 1)) * n / kN);
      y[static_cast<std::size_t>(n)] = x * std::cos(2 * M_PI * decided * kSpacing * n / kN);
    }
    auto magnitude = [&](int bin) { return std::abs(std::complex<double>(dft(y, bin))); };
    checksum += (1 + b % 3) * magnitude(kDataBin);
    int next = 0;
    for (int c = 1; c < kChannels; ++c)
      if (magnitude(kPilotBin + c) > magnitude(kPilotBin + next)) next = c;
    followed += decided == channelOf(b) ? 1 : 0;
    decided = next;
  }
  EXPECT_EQ(followed, kBlocks) << "the sequential receiver itself lost the hops";
  std::string out;
  const double got = runExample("fhr", "checksum", &out);
  EXPECT_NEAR(got, checksum, 1e-6 * std::abs(checksum) + 1e-3) << out;
  EXPECT_NE(out.find("fhr: blocks=64 "), std::string::npos) << out;
}

}  // namespace
}  // namespace dispar::testing
