#pragma once
// The report `overlap validate` writes: predicted against measured time per variant and shape,
// the measured and predicted speedup of each hypothesis pair, summary statistics, as markdown
// (for people), JSON (for scripts) and an SVG scatter plot. Pure host code, so the format is
// tested without a GPU and stays stable across GPUs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace overlap::app {

struct ValidationRow {
  std::string workload, variant, shape;
  bool passed = false;         // correctness check on the test vectors
  std::string failure;         // why it failed (or could not run); empty when passed
  double worst_rel_error = 0;  // largest output relative error against the expected outputs
  double measured_us = 0;      // median; 0 when not timed
  int timed_runs = 0;
  double predicted_us = 0;
  std::string bottleneck;      // the model's bottleneck unit
  bool timed() const { return passed && measured_us > 0; }
  double error() const { return predicted_us / measured_us - 1.0; }  // signed relative error
};

// Speedup of `candidate` over `baseline` at one shape (time_baseline / time_candidate).
struct SpeedupPair {
  std::string workload, shape, baseline, candidate;
  double measured = 0, predicted = 0;
  bool counted() const;     // measured effect larger than 5%: its sign must be predicted right
  bool sign_right() const;  // predicted and measured on the same side of 1
};

// overlap tune's question answered by measurement, at one workload and shape: the variant the
// model ranks fastest against the one measured fastest, and how well the two rankings agree.
struct TuneCheck {
  std::string workload, shape;
  int variants = 0;             // timed at this shape
  std::string pick, best;       // fastest predicted, fastest measured
  double pick_over_best = 1;    // measured time of the pick over the measured best (1: the best)
  double spearman = 0;          // rank correlation of predicted and measured times
};

struct ValidationSummary {
  int timed = 0, failed = 0;
  double median_abs_error = 0, max_abs_error = 0;
  int pairs_counted = 0, pairs_sign_right = 0;
  int tune_groups = 0;                    // shapes with a TuneCheck
  double worst_pick_over_best = 1, min_spearman = 1;
};

struct ValidationReport {
  std::string gpu, date, profile, command;
  std::vector<ValidationRow> rows;
  std::vector<SpeedupPair> pairs;
  std::vector<TuneCheck> tuning;
  ValidationSummary summary;
};

// Hypothesis pairs among timed rows at the same workload and shape: variants whose names
// differ in exactly one '_'-separated word (pipelined_fused vs pingpong_fused; pipelined_fused
// vs pipelined_materialized), when every variant is in such a pair. Otherwise (names without
// that structure, like linrnn's) every variant is paired with the first one listed.
std::vector<SpeedupPair> hypothesis_pairs(const std::vector<ValidationRow>& rows);
// One TuneCheck per workload and shape with at least 3 timed variants (fewer make no ranking).
std::vector<TuneCheck> tune_checks(const std::vector<ValidationRow>& rows);
ValidationSummary summarize(const std::vector<ValidationRow>& rows, const std::vector<SpeedupPair>& pairs,
                            const std::vector<TuneCheck>& tuning = {});

// Pairs, tuning checks and summary of report.rows (what every report carries besides its rows).
void score(ValidationReport& report);

// A report read back from report_to_json's output: its header and rows, scored again (the
// pairs, tuning checks and summary in the file are not trusted). Throws overlap::Error naming
// the field that is missing or of the wrong type.
ValidationReport report_from_json(const nlohmann::json& j);

// Reports of runs on one GPU with one profile (one per workload, say, each within a time limit)
// as one: a later report's row replaces an earlier row of the same workload, variant and shape;
// or, with `median`, the rows of one workload, variant and shape measured in several reports
// (repeated runs, on one machine or several of one GPU model) become one: the median of their
// measured times (of the middle two where they are even in number), passed only if every run
// passed, the worst of their errors, their timed runs summed; a pair's speedup is then the ratio
// of its two rows' medians, which may come from different runs. The newest date is kept, the
// commands joined. Throws overlap::Error when the GPUs or profiles differ, naming both.
ValidationReport merge_reports(const std::vector<ValidationReport>& reports, bool median = false);

std::string render_markdown(const ValidationReport& report);
nlohmann::json report_to_json(const ValidationReport& report);
std::string render_svg(const ValidationReport& report);  // predicted vs measured, log-log

}  // namespace overlap::app
