// Leave-one-out cost prediction from code features (issue 13; docs/streammap.md, "Predicted costs"):
// every VNODE of the performance history in DB that has code features is predicted by CostPredictor
// from all the others, and its prediction compared with its measured cost; the baseline predicts every
// VNODE as the median cost of the others. Prints both median relative errors and their ratio. A VNODE's
// features hold its run's message sizes where they were recorded, as `map` takes them from the history
// for code that changed since; the error of the code features alone is printed beside.
//
// Usage: bench_prediction DB [DEVICE_CLASS]   (bench/prediction/run.sh fills DB from a corpus)
#include "streammap/CostHistory.h"
#include "streammap/CostPredictor.h"
#include "streammap/ResourceDb.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using dispar::streammap::CostHistory;
using dispar::streammap::CostPredictor;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_prediction DB [cpu|gpu]\n");
    return 1;
  }
  const std::string deviceClass = argc > 2 ? argv[2] : "cpu";
  std::string error;
  auto db = dispar::streammap::ResourceDb::open(argv[1], dispar::streammap::ResourceDb::OpenMode::Existing, error);
  std::vector<dispar::streammap::CostSample> samples;
  std::vector<dispar::streammap::PipeSample> pipes;
  if (!db || !db->readHistory("", samples, pipes, error)) {
    std::fprintf(stderr, "bench_prediction: error: %s\n", error.c_str());
    return 1;
  }
  const CostHistory history(samples, pipes);
  const CostPredictor predictor(history);
  std::vector<const CostHistory::Entry*> corpus;
  for (const CostHistory::Entry& e : history.entries())
    if (e.key.deviceClass == deviceClass && !e.features.empty() && e.work.value > 0) corpus.push_back(&e);
  std::printf("leave-one-out cost prediction on %zu measured VNODEs (%s) with code features, k = %d\n", corpus.size(),
              deviceClass.c_str(), CostPredictor::kNeighbours);
  std::printf("%-14s %-22s %14s %14s %9s %14s %9s  %s\n", "program", "vnode", "measured", "predicted", "error",
              "median", "error", "nearest");
  std::vector<double> knnErrors, medianErrors, codeOnlyErrors;
  int closer = 0;
  for (const CostHistory::Entry* e : corpus) {
    std::string why;
    const auto prediction = predictor.predict(e->features, deviceClass, e->key.program, e->key.vnode, why);
    std::vector<double> others;
    for (const CostHistory::Entry* o : corpus)
      if (o != e) others.push_back(o->work.value);
    const double baseline = median(others);
    const double measured = e->work.value;
    const double baselineError = std::fabs(baseline - measured) / measured;
    medianErrors.push_back(baselineError);
    if (!prediction) {
      std::printf("%-14s %-22s %14.4g %14s %9s %14.4g %8.0f%%  (%s)\n", e->key.program.c_str(), e->key.vnode.c_str(),
                  measured, "-", "-", baseline, 100 * baselineError, why.c_str());
      continue;
    }
    const double knnError = std::fabs(prediction->work - measured) / measured;
    knnErrors.push_back(knnError);
    dispar::lang::CodeFeatures code = e->features;
    code.erase(dispar::streammap::kMessageBytesIn);
    code.erase(dispar::streammap::kMessageBytesOut);
    if (const auto fromCode = predictor.predict(code, deviceClass, e->key.program, e->key.vnode, why))
      codeOnlyErrors.push_back(std::fabs(fromCode->work - measured) / measured);
    closer += knnError < baselineError;
    std::printf("%-14s %-22s %14.4g %14.4g %8.0f%% %14.4g %8.0f%%  %s\n", e->key.program.c_str(), e->key.vnode.c_str(),
                measured, prediction->work, 100 * knnError, baseline, 100 * baselineError,
                prediction->nearest.front().c_str());
  }
  if (knnErrors.empty()) {
    std::printf("no prediction was possible: too little history with code features\n");
    return 1;
  }
  const double knn = median(knnErrors), base = median(medianErrors);
  std::printf("\nmedian relative error: kNN %.0f%% (target <= 50%%), corpus median %.0f%%; kNN / median %.2fx "
              "(target < 1); kNN closer on %d of %zu\n",
              100 * knn, 100 * base, knn / base, closer, knnErrors.size());
  std::printf("kNN on the code features alone, without the run's message sizes: %.0f%%\n",
              100 * median(codeOnlyErrors));
  return 0;
}
