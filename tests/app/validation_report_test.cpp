#include "app/validate/validation_report.hpp"

#include <gtest/gtest.h>

namespace overlap::app {
namespace {

ValidationRow row(const std::string& variant, const std::string& shape, double measured, double predicted) {
  ValidationRow r;
  r.workload = "gla";
  r.variant = variant;
  r.shape = shape;
  r.passed = true;
  r.measured_us = measured;
  r.predicted_us = predicted;
  r.timed_runs = 30;
  return r;
}

TEST(ValidationReport, PairsVariantsDifferingInOneWordAtTheSameShape) {
  const std::vector<ValidationRow> rows = {
      row("sequential_fused", "S1", 200, 180), row("pipelined_fused", "S1", 100, 110),
      row("pipelined_materialized", "S1", 150, 120), row("sequential_fused", "S2", 50, 40)};
  const auto pairs = hypothesis_pairs(rows);
  ASSERT_EQ(pairs.size(), 2u);  // seq_fused~pip_fused, pip_fused~pip_materialized; S2 has one row
  EXPECT_EQ(pairs[0].baseline, "sequential_fused");
  EXPECT_EQ(pairs[0].candidate, "pipelined_fused");
  EXPECT_DOUBLE_EQ(pairs[0].measured, 2.0);
  EXPECT_NEAR(pairs[0].predicted, 180.0 / 110.0, 1e-12);
  EXPECT_EQ(pairs[1].baseline, "pipelined_fused");
  EXPECT_EQ(pairs[1].candidate, "pipelined_materialized");
}

TEST(ValidationReport, UnstructuredNamesPairWithTheFirstVariant) {
  const std::vector<ValidationRow> rows = {row("three_kernel", "S", 300, 280), row("semi_fused", "S", 100, 90),
                                           row("chunk_fused", "S", 50, 60)};
  const auto pairs = hypothesis_pairs(rows);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[1].baseline, "three_kernel");
  EXPECT_EQ(pairs[1].candidate, "chunk_fused");
}

TEST(ValidationReport, SummaryCountsErrorsFailuresAndSigns) {
  std::vector<ValidationRow> rows = {row("a_x", "S", 100, 110), row("b_x", "S", 100, 70), row("c_x", "S", 100, 95)};
  ValidationRow failed = row("d_x", "S", 0, 50);
  failed.passed = false;
  failed.failure = "o: rel 1e-1";
  rows.push_back(failed);
  const auto pairs = hypothesis_pairs(rows);  // a~b, a~c, b~c (all differ in the first word)
  const auto s = summarize(rows, pairs);
  EXPECT_EQ(s.timed, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_NEAR(s.median_abs_error, 0.10, 1e-12);
  EXPECT_NEAR(s.max_abs_error, 0.30, 1e-12);
  // Measured speedups are all 1.0 (equal times): none is counted.
  EXPECT_EQ(s.pairs_counted, 0);
}

TEST(ValidationReport, ASpeedupPredictedOnTheWrongSideIsCountedWrong) {
  SpeedupPair p{"gla", "S", "a", "b", 1.5, 0.9};
  EXPECT_TRUE(p.counted());
  EXPECT_FALSE(p.sign_right());
  SpeedupPair q{"gla", "S", "a", "b", 1.03, 0.9};
  EXPECT_FALSE(q.counted());
}

TEST(ValidationReport, RendersEveryRowInMarkdownJsonAndSvg) {
  ValidationReport r;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.date = "2026-11-22";
  r.profile = "H100";
  r.command = "overlap validate";
  r.rows = {row("sequential_fused", "B=4,T=1024", 200, 180), row("pipelined_fused", "B=4,T=1024", 100, 110)};
  ValidationRow failed = row("pingpong_fused", "B=4,T=1024", 0, 90);
  failed.passed = false;
  failed.failure = "o: rel 2.0e-01";
  r.rows.push_back(failed);
  r.pairs = hypothesis_pairs(r.rows);
  r.summary = summarize(r.rows, r.pairs);

  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("| gla | pipelined_fused | B=4,T=1024 | pass |"), std::string::npos) << md;
  EXPECT_NE(md.find("FAIL: o: rel 2.0e-01"), std::string::npos);
  EXPECT_NE(md.find("+10.0%"), std::string::npos);
  EXPECT_NE(md.find("2.00x"), std::string::npos);

  const auto j = report_to_json(r);
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["summary"]["failed"], 1);
  EXPECT_EQ(j["pairs"][0]["measured_speedup"], 2.0);

  const std::string svg = render_svg(r);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  // One point per timed row (2), plus one legend dot per variant shown (2).
  std::size_t circles = 0;
  for (auto pos = svg.find("<circle"); pos != std::string::npos; pos = svg.find("<circle", pos + 1)) ++circles;
  EXPECT_EQ(circles, 4u);
}

TEST(ValidationReport, TuneCheckComparesTheModelsPickWithTheMeasuredBest) {
  // S1: the model ranks c fastest, b is measured fastest; S2 has two rows (no ranking).
  const std::vector<ValidationRow> rows = {
      row("a", "S1", 100, 100), row("b", "S1", 50, 80), row("c", "S1", 60, 70), row("d", "S1", 200, 300),
      row("a", "S2", 10, 10), row("b", "S2", 20, 20)};
  const auto checks = tune_checks(rows);
  ASSERT_EQ(checks.size(), 1u);
  const TuneCheck& c = checks[0];
  EXPECT_EQ(c.shape, "S1");
  EXPECT_EQ(c.variants, 4);
  EXPECT_EQ(c.pick, "c");
  EXPECT_EQ(c.best, "b");
  EXPECT_DOUBLE_EQ(c.pick_over_best, 60.0 / 50.0);
  // Measured ranks (a,b,c,d) = (3,1,2,4), predicted (3,2,1,4): sum d^2 = 2, rho = 1 - 12/60.
  EXPECT_NEAR(c.spearman, 0.8, 1e-12);
  const auto s = summarize(rows, hypothesis_pairs(rows), checks);
  EXPECT_EQ(s.tune_groups, 1);
  EXPECT_DOUBLE_EQ(s.worst_pick_over_best, 1.2);
  EXPECT_NEAR(s.min_spearman, 0.8, 1e-12);

  ValidationReport r;
  r.rows = rows;
  r.tuning = checks;
  r.summary = s;
  EXPECT_NE(render_markdown(r).find("| gla | S1 | 4 | c | b | 1.20 | 0.80 |"), std::string::npos) << render_markdown(r);
  EXPECT_EQ(report_to_json(r)["tuning"][0]["pick"], "c");
}

}  // namespace
}  // namespace overlap::app
