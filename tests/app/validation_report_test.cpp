#include "app/validate/validation_report.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

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

ValidationReport report_of(std::vector<ValidationRow> rows, const std::string& date, const std::string& command) {
  ValidationReport r;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.profile = "H100";
  r.date = date;
  r.command = command;
  r.rows = std::move(rows);
  score(r);
  return r;
}

TEST(ValidationReport, ReadsBackWhatItWritesAndScoresItAgain) {
  ValidationRow failed = row("pipelined_materialized", "S1", 0, 120);
  failed.passed = false;
  failed.failure = "o: relative error 0.2 over 0.005";
  const ValidationReport r = report_of({row("sequential_fused", "S1", 200, 180), row("pipelined_fused", "S1", 100, 110),
                                        failed},
                                       "2026-11-26", "overlap validate --workload gla");
  nlohmann::json j = report_to_json(r);
  j["summary"]["median_abs_error"] = 0.5;  // a summary in the file is not trusted: it is recomputed
  const ValidationReport back = report_from_json(j);
  EXPECT_EQ(back.gpu, r.gpu);
  EXPECT_EQ(back.profile, "H100");
  EXPECT_EQ(back.command, r.command);
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_EQ(back.rows[2].failure, failed.failure);
  EXPECT_FALSE(back.rows[2].passed);
  EXPECT_DOUBLE_EQ(back.rows[1].predicted_us, 110);
  EXPECT_EQ(back.summary.failed, 1);
  EXPECT_DOUBLE_EQ(back.summary.median_abs_error, r.summary.median_abs_error);
  EXPECT_EQ(report_to_json(back).dump(), report_to_json(r).dump());
}

TEST(ValidationReport, ReadingNamesTheFieldThatIsMissingOrMistyped) {
  nlohmann::json j = report_to_json(report_of({row("sequential_fused", "S1", 200, 180)}, "2026-11-26", "c"));
  j["rows"][0].erase("measured_us");
  try {
    report_from_json(j);
    FAIL() << "a row without measured_us was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 0 has no \"measured_us\""), std::string::npos) << e.what();
  }
  j["rows"][0]["measured_us"] = "fast";
  try {
    report_from_json(j);
    FAIL() << "a string measured_us was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 0's \"measured_us\" is \"fast\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(report_from_json(nlohmann::json{{"format", "something else"}}), Error);
}

TEST(ValidationReport, MergingKeepsEveryWorkloadAndLetsALaterRunReplaceARow) {
  ValidationRow lin = row("three_kernel", "L1", 80, 88);
  lin.workload = "linrnn";
  const ValidationReport gla = report_of({row("sequential_fused", "S1", 200, 180), row("pipelined_fused", "S1", 100, 110)},
                                         "2026-11-25", "overlap validate --workload gla");
  const ValidationReport later = report_of({row("pipelined_fused", "S1", 90, 110), lin}, "2026-11-26",
                                           "overlap validate --workload linrnn");
  const ValidationReport m = merge_reports({gla, later});
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(m.rows[1].measured_us, 90);  // the later run's pipelined_fused at S1
  EXPECT_EQ(m.rows[2].workload, "linrnn");
  EXPECT_EQ(m.date, "2026-11-26");
  EXPECT_EQ(m.command, "overlap validate --workload gla; overlap validate --workload linrnn");
  ASSERT_EQ(m.pairs.size(), 1u);  // sequential_fused ~ pipelined_fused at S1, with the new time
  EXPECT_DOUBLE_EQ(m.pairs[0].measured, 200.0 / 90.0);
  EXPECT_EQ(m.summary.timed, 3);

  ValidationReport other = later;
  other.gpu = "NVIDIA H200";
  try {
    merge_reports({gla, other});
    FAIL() << "reports of two GPUs were merged";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NVIDIA H100 80GB HBM3 and NVIDIA H200"), std::string::npos) << e.what();
  }
}

TEST(ValidationReport, MergingByMedianTakesTheMiddleRunOfARowMeasuredSeveralTimes) {
  const auto run = [](double seq_us, double pip_us, bool pip_passed) {
    ValidationRow pip = row("pipelined_fused", "S1", pip_us, 110);
    pip.passed = pip_passed;
    if (!pip_passed) pip.failure = "o off by 0.5";
    return report_of({row("sequential_fused", "S1", seq_us, 180), pip}, "2026-11-25", "overlap validate");
  };
  const ValidationReport three = merge_reports({run(200, 100, true), run(260, 90, true), run(230, 95, true)}, true);
  ASSERT_EQ(three.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(three.rows[0].measured_us, 230);
  EXPECT_DOUBLE_EQ(three.rows[1].measured_us, 95);
  EXPECT_EQ(three.rows[1].timed_runs, 3 * row("x", "S", 1, 1).timed_runs);
  ASSERT_EQ(three.pairs.size(), 1u);
  EXPECT_DOUBLE_EQ(three.pairs[0].measured, 230.0 / 95.0);
  // Two runs: the mean of the two; a run that failed its check fails the row.
  const ValidationReport two = merge_reports({run(200, 100, true), run(260, 90, false)}, true);
  EXPECT_DOUBLE_EQ(two.rows[0].measured_us, 230);
  EXPECT_FALSE(two.rows[1].passed);
  EXPECT_EQ(two.rows[1].failure, "o off by 0.5");
  // A failure in an earlier run fails the row too, with its message.
  const ValidationReport failed_first = merge_reports({run(200, 100, false), run(260, 90, true)}, true);
  EXPECT_FALSE(failed_first.rows[1].passed);
  EXPECT_EQ(failed_first.rows[1].failure, "o off by 0.5");
  // A row in only some runs takes the times it has; a run without a time is left out.
  ValidationReport partial = run(240, 80, true);
  partial.rows.pop_back();
  partial.rows[0].measured_us = 0;
  const ValidationReport uneven = merge_reports({run(200, 100, true), partial, run(260, 90, true)}, true);
  EXPECT_DOUBLE_EQ(uneven.rows[0].measured_us, 230);  // 200 and 260; the 0 left out
  EXPECT_DOUBLE_EQ(uneven.rows[1].measured_us, 95);   // 100 and 90
  // Without the median the last run's row stands.
  EXPECT_DOUBLE_EQ(merge_reports({run(200, 100, true), run(260, 90, true)}).rows[0].measured_us, 260);
}

}  // namespace
}  // namespace overlap::app
