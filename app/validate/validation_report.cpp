#include "app/validate/validation_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "core/statistics.hpp"

namespace overlap::app {
namespace {

std::vector<std::string> words(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto u = name.find('_', start);
    out.push_back(name.substr(start, u - start));
    if (u == std::string::npos) return out;
    start = u + 1;
  }
}

bool differ_in_one_word(const std::string& a, const std::string& b) {
  const auto wa = words(a), wb = words(b);
  if (wa.size() != wb.size()) return false;
  int diff = 0;
  for (std::size_t i = 0; i < wa.size(); ++i) diff += wa[i] != wb[i];
  return diff == 1;
}

SpeedupPair make_pair(const ValidationRow& a, const ValidationRow& b) {
  return {a.workload, a.shape, a.variant, b.variant, a.measured_us / b.measured_us, a.predicted_us / b.predicted_us};
}

// Timed rows grouped by (workload, shape), groups and rows in first-seen order.
using RowGroups = std::vector<std::vector<const ValidationRow*>>;
RowGroups timed_groups(const std::vector<ValidationRow>& rows) {
  std::vector<std::string> keys;
  RowGroups groups;
  for (const auto& r : rows) {
    if (!r.timed()) continue;
    const std::string key = r.workload + "|" + r.shape;
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      groups.push_back({&r});
    } else {
      groups[std::size_t(it - keys.begin())].push_back(&r);
    }
  }
  return groups;
}

}  // namespace

bool SpeedupPair::counted() const { return std::fabs(measured - 1.0) > 0.05; }
bool SpeedupPair::sign_right() const { return (measured > 1.0) == (predicted > 1.0); }

std::vector<SpeedupPair> hypothesis_pairs(const std::vector<ValidationRow>& rows) {
  std::vector<SpeedupPair> pairs;
  for (const auto& group : timed_groups(rows)) {
    // Structured names (schedule_carry) pair along one axis at a time, but only when that
    // leaves no variant out; otherwise every variant is compared with the first.
    std::vector<SpeedupPair> one_word;
    std::vector<bool> paired(group.size(), false);
    for (std::size_t i = 0; i < group.size(); ++i)
      for (std::size_t j = i + 1; j < group.size(); ++j)
        if (differ_in_one_word(group[i]->variant, group[j]->variant)) {
          paired[i] = paired[j] = true;
          one_word.push_back(make_pair(*group[i], *group[j]));
        }
    if (std::all_of(paired.begin(), paired.end(), [](bool p) { return p; })) {
      pairs.insert(pairs.end(), one_word.begin(), one_word.end());
      continue;
    }
    for (std::size_t j = 1; j < group.size(); ++j) pairs.push_back(make_pair(*group[0], *group[j]));
  }
  return pairs;
}

std::vector<TuneCheck> tune_checks(const std::vector<ValidationRow>& rows) {
  std::vector<TuneCheck> out;
  for (const auto& group : timed_groups(rows)) {
    if (group.size() < 3) continue;
    TuneCheck c{group[0]->workload, group[0]->shape, int(group.size()), "", "", 1, 0};
    const auto by = [](double ValidationRow::*field) {
      return [field](const ValidationRow* a, const ValidationRow* b) { return a->*field < b->*field; };
    };
    const ValidationRow* pick = *std::min_element(group.begin(), group.end(), by(&ValidationRow::predicted_us));
    const ValidationRow* best = *std::min_element(group.begin(), group.end(), by(&ValidationRow::measured_us));
    c.pick = pick->variant;
    c.best = best->variant;
    c.pick_over_best = pick->measured_us / best->measured_us;
    std::vector<double> predicted, measured;
    for (const ValidationRow* r : group) {
      predicted.push_back(r->predicted_us);
      measured.push_back(r->measured_us);
    }
    c.spearman = spearman(predicted, measured);
    out.push_back(c);
  }
  return out;
}

ValidationSummary summarize(const std::vector<ValidationRow>& rows, const std::vector<SpeedupPair>& pairs,
                            const std::vector<TuneCheck>& tuning) {
  ValidationSummary s;
  s.tune_groups = int(tuning.size());
  for (const auto& c : tuning) {
    s.worst_pick_over_best = std::max(s.worst_pick_over_best, c.pick_over_best);
    s.min_spearman = std::min(s.min_spearman, c.spearman);
  }
  std::vector<double> errors;
  for (const auto& r : rows) {
    if (!r.passed) ++s.failed;
    if (!r.timed()) continue;
    ++s.timed;
    errors.push_back(std::fabs(r.error()));
  }
  s.median_abs_error = median(errors);
  s.max_abs_error = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  for (const auto& p : pairs) {
    if (!p.counted()) continue;
    ++s.pairs_counted;
    s.pairs_sign_right += p.sign_right();
  }
  return s;
}

std::string render_markdown(const ValidationReport& r) {
  std::string md = fmt::format("# Validation: predicted against measured\n\n"
                               "- GPU: {}\n- Date: {}\n- Profile: {}\n- Command: `{}`\n\n",
                               r.gpu, r.date, r.profile, r.command);
  const auto& s = r.summary;
  md += fmt::format("## Summary\n\n| timed | failed | median abs error | max abs error | speedup signs right (|measured-1| > 5%) |\n"
                    "|---:|---:|---:|---:|---:|\n| {} | {} | {:.1f}% | {:.1f}% | {} / {} |\n\n",
                    s.timed, s.failed, 100 * s.median_abs_error, 100 * s.max_abs_error, s.pairs_sign_right,
                    s.pairs_counted);
  md += "## Per variant and shape\n\n| workload | variant | shape | check | worst rel. error | measured us | predicted us | error | model bottleneck |\n"
        "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& row : r.rows) {
    const std::string check = row.passed ? "pass" : "FAIL: " + row.failure;
    if (row.timed())
      md += fmt::format("| {} | {} | {} | {} | {:.2e} | {:.1f} | {:.1f} | {:+.1f}% | {} |\n", row.workload,
                        row.variant, row.shape, check, row.worst_rel_error, row.measured_us, row.predicted_us,
                        100 * row.error(), row.bottleneck);
    else
      md += fmt::format("| {} | {} | {} | {} | {:.2e} | - | {:.1f} | - | {} |\n", row.workload, row.variant,
                        row.shape, check, row.worst_rel_error, row.predicted_us, row.bottleneck);
  }
  md += "\n## Hypothesis pairs (speedup of candidate over baseline)\n\n"
        "| workload | shape | baseline | candidate | measured | predicted | sign |\n|---|---|---|---|---:|---:|---|\n";
  for (const auto& p : r.pairs)
    md += fmt::format("| {} | {} | {} | {} | {:.2f}x | {:.2f}x | {} |\n", p.workload, p.shape, p.baseline,
                      p.candidate, p.measured, p.predicted,
                      !p.counted() ? "(within 5%)" : p.sign_right() ? "right" : "WRONG");
  if (!r.tuning.empty()) {
    md += fmt::format("\n## Tuning: the model's pick against the measured best\n\n"
                      "Per workload and shape with 3 or more timed variants: the variant the model ranks fastest, "
                      "the one measured fastest, the pick's measured time over the best's, and the rank "
                      "correlation of predicted and measured times. Worst pick/best {:.2f}, lowest Spearman {:.2f} "
                      "over {} shapes.\n\n"
                      "| workload | shape | variants | model's pick | measured best | pick / best | Spearman |\n"
                      "|---|---|---:|---|---|---:|---:|\n",
                      s.worst_pick_over_best, s.min_spearman, s.tune_groups);
    for (const auto& c : r.tuning)
      md += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {:.2f} |\n", c.workload, c.shape, c.variants, c.pick,
                        c.best, c.pick_over_best, c.spearman);
  }
  md += "\n![predicted against measured](plot.svg)\n";
  return md;
}

void score(ValidationReport& report) {
  report.pairs = hypothesis_pairs(report.rows);
  report.tuning = tune_checks(report.rows);
  report.summary = summarize(report.rows, report.pairs, report.tuning);
}

namespace {

template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  OVERLAP_REQUIRE(j.is_object() && j.contains(key), "validation report: {} has no \"{}\"", where, key);
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("validation report: {}'s \"{}\" is {} ({}), not the type expected", where, key,
                            j.at(key).dump(), j.at(key).type_name()));
  }
}

}  // namespace

ValidationReport report_from_json(const nlohmann::json& j) {
  OVERLAP_REQUIRE(j.is_object() && j.value("format", std::string()) == "overlap-validation-report",
                  "validation report: not an overlap validate report.json (its \"format\" is {})",
                  j.is_object() && j.contains("format") ? j.at("format").dump() : std::string("missing"));
  ValidationReport r;
  r.gpu = field<std::string>(j, "gpu", "the report");
  r.date = field<std::string>(j, "date", "the report");
  r.profile = field<std::string>(j, "profile", "the report");
  r.command = field<std::string>(j, "command", "the report");
  const auto rows = j.value("rows", nlohmann::json::array());
  OVERLAP_REQUIRE(rows.is_array(), "validation report: \"rows\" is {}, not an array", rows.type_name());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    const std::string where = fmt::format("row {}", i);
    ValidationRow row;
    row.workload = field<std::string>(x, "workload", where);
    row.variant = field<std::string>(x, "variant", where);
    row.shape = field<std::string>(x, "shape", where);
    row.passed = field<bool>(x, "passed", where);
    row.failure = field<std::string>(x, "failure", where);
    row.worst_rel_error = field<double>(x, "worst_rel_error", where);
    row.measured_us = field<double>(x, "measured_us", where);
    row.timed_runs = field<int>(x, "timed_runs", where);
    row.predicted_us = field<double>(x, "predicted_us", where);
    row.bottleneck = field<std::string>(x, "bottleneck", where);
    r.rows.push_back(std::move(row));
  }
  score(r);
  return r;
}

namespace {

// One row for several runs of the same workload, variant and shape (merge_reports' median).
ValidationRow median_row(const std::vector<ValidationRow>& runs) {
  ValidationRow out = runs.back();
  std::vector<double> times;
  out.timed_runs = 0;
  for (const auto& r : runs) {
    out.passed = out.passed && r.passed;
    if (!r.passed && out.failure.empty()) out.failure = r.failure;
    out.worst_rel_error = std::max(out.worst_rel_error, r.worst_rel_error);
    out.timed_runs += r.timed_runs;
    if (r.measured_us > 0) times.push_back(r.measured_us);
  }
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  out.measured_us = n == 0 ? 0 : n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  return out;
}

}  // namespace

ValidationReport merge_reports(const std::vector<ValidationReport>& reports, bool median) {
  OVERLAP_REQUIRE(!reports.empty(), "merge_reports: no reports to merge");
  ValidationReport out;
  out.gpu = reports.front().gpu;
  out.profile = reports.front().profile;
  std::vector<std::vector<ValidationRow>> runs;  // of out.rows[i], with `median`
  for (const auto& r : reports) {
    OVERLAP_REQUIRE(r.gpu == out.gpu, "merge_reports: the reports are of different GPUs ({} and {})", out.gpu, r.gpu);
    OVERLAP_REQUIRE(r.profile == out.profile, "merge_reports: the reports were predicted with different profiles ({} and {})",
                    out.profile, r.profile);
    out.date = std::max(out.date, r.date);  // ISO dates order as strings
    out.command += (out.command.empty() ? "" : "; ") + r.command;
    for (const auto& row : r.rows) {
      const auto same = std::find_if(out.rows.begin(), out.rows.end(), [&](const ValidationRow& o) {
        return o.workload == row.workload && o.variant == row.variant && o.shape == row.shape;
      });
      if (same == out.rows.end()) {
        out.rows.push_back(row);
        if (median) runs.push_back({row});
      } else if (median) {
        auto& seen = runs[std::size_t(same - out.rows.begin())];
        seen.push_back(row);
        *same = median_row(seen);
      } else {
        *same = row;
      }
    }
  }
  score(out);
  return out;
}

nlohmann::json report_to_json(const ValidationReport& r) {
  nlohmann::ordered_json j;
  j["format"] = "overlap-validation-report";
  j["format_version"] = 1;
  j["gpu"] = r.gpu;
  j["date"] = r.date;
  j["profile"] = r.profile;
  j["command"] = r.command;
  j["summary"] = {{"timed", r.summary.timed},
                  {"failed", r.summary.failed},
                  {"median_abs_error", r.summary.median_abs_error},
                  {"max_abs_error", r.summary.max_abs_error},
                  {"pairs_counted", r.summary.pairs_counted},
                  {"pairs_sign_right", r.summary.pairs_sign_right},
                  {"tune_groups", r.summary.tune_groups},
                  {"worst_pick_over_best", r.summary.worst_pick_over_best},
                  {"min_spearman", r.summary.min_spearman}};
  for (const auto& row : r.rows)
    j["rows"].push_back({{"workload", row.workload}, {"variant", row.variant}, {"shape", row.shape},
                         {"passed", row.passed}, {"failure", row.failure},
                         {"worst_rel_error", row.worst_rel_error}, {"measured_us", row.measured_us},
                         {"timed_runs", row.timed_runs}, {"predicted_us", row.predicted_us},
                         {"bottleneck", row.bottleneck}});
  for (const auto& p : r.pairs)
    j["pairs"].push_back({{"workload", p.workload}, {"shape", p.shape}, {"baseline", p.baseline},
                          {"candidate", p.candidate}, {"measured_speedup", p.measured},
                          {"predicted_speedup", p.predicted}, {"counted", p.counted()},
                          {"sign_right", p.sign_right()}});
  for (const auto& c : r.tuning)
    j["tuning"].push_back({{"workload", c.workload}, {"shape", c.shape}, {"variants", c.variants},
                           {"pick", c.pick}, {"best", c.best}, {"pick_over_best", c.pick_over_best},
                           {"spearman", c.spearman}});
  return j;
}

std::string render_svg(const ValidationReport& r) {
  constexpr double W = 560, H = 560, M = 70;  // canvas and margin, pixels
  double lo = 1e30, hi = 0;
  for (const auto& row : r.rows)
    if (row.timed()) {
      lo = std::min({lo, row.measured_us, row.predicted_us});
      hi = std::max({hi, row.measured_us, row.predicted_us});
    }
  if (hi <= 0) lo = 1, hi = 10;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi)) + (lo == hi);
  auto px = [&](double us) { return M + (std::log10(us) - l0) / (l1 - l0) * (W - 2 * M); };
  auto py = [&](double us) { return H - M - (std::log10(us) - l0) / (l1 - l0) * (H - 2 * M); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">{3}: predicted vs measured (us)</text>\n",
      W, H, W / 2, r.gpu);
  // Bands: y = x, and +-10% / +-30%.
  for (auto [factor, style] : {std::pair{1.0, "stroke=\"black\""}, std::pair{1.1, "stroke=\"#888\" stroke-dasharray=\"4 3\""},
                               std::pair{1 / 1.1, "stroke=\"#888\" stroke-dasharray=\"4 3\""},
                               std::pair{1.3, "stroke=\"#ccc\" stroke-dasharray=\"2 4\""},
                               std::pair{1 / 1.3, "stroke=\"#ccc\" stroke-dasharray=\"2 4\""}}) {
    const double a = std::pow(10, l0), b = std::pow(10, l1);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", px(a), py(a * factor),
                       px(b), py(b * factor), style);
  }
  for (double e = l0; e <= l1; ++e) {
    const double v = std::pow(10, e);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", px(v), H - M + 18, v);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", M - 6, py(v) + 4, v);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">measured (us)</text>\n", W / 2, H - 20);
  svg += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">predicted (us)</text>\n", H / 2);
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::map<std::string, int> colour;
  for (const auto& row : r.rows) {
    if (!row.timed()) continue;
    const int c = colour.emplace(row.variant, static_cast<int>(colour.size())).first->second % 6;
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} {} {}: measured {:.1f} us, predicted {:.1f} us</title></circle>\n",
                       px(row.measured_us), py(row.predicted_us), kColours[c], row.workload, row.variant, row.shape,
                       row.measured_us, row.predicted_us);
  }
  int i = 0;
  for (const auto& [name, c] : colour)
    svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", M + 10,
                       M + 10 + 16 * i, kColours[c % 6], M + 20, M + 14 + 16 * i, name), ++i;
  return svg + "</svg>\n";
}

}  // namespace overlap::app
