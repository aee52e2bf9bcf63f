#include "sim/profile.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "sim/builtin_profiles.hpp"

namespace overlap::sim {

std::string_view copy_engine_name(CopyEngine e) {
  switch (e) {
    case CopyEngine::Tma: return "tma";
    case CopyEngine::CpAsync: return "cp_async";
    case CopyEngine::LdSt: return "ld_st";
  }
  return "?";
}

const std::vector<ProfileField>& profile_fields() {
  using P = HardwareProfile;
  static const std::vector<ProfileField> fields = {
      {"compute_capability", "", "SM architecture x10 (75, 80, 90, 100)", &P::compute_capability},
      {"sm_count", "SMs", "streaming multiprocessors", &P::sm_count},
      {"clock_MHz", "MHz", "SM clock used to turn cycles into time", &P::clock_MHz},
      {"regs_per_sm", "registers", "32-bit registers per SM", &P::regs_per_sm},
      {"smem_per_sm_KiB", "KiB", "shared memory per SM", &P::smem_per_sm_KiB},
      {"smem_per_cta_KiB", "KiB", "largest shared memory one CTA may use", &P::smem_per_cta_KiB},
      {"max_threads_per_sm", "threads", "resident threads per SM", &P::max_threads_per_sm},
      {"max_ctas_per_sm", "CTAs", "resident CTAs per SM", &P::max_ctas_per_sm},
      {"hbm_bandwidth_GBps", "GB/s", "attainable device-memory bandwidth, reads+writes", &P::hbm_bandwidth_GBps},
      {"hbm_capacity_GB", "GB", "device memory", &P::hbm_capacity_GB},
      {"l2_size_MiB", "MiB", "L2 cache", &P::l2_size_MiB},
      {"l2_bandwidth_GBps", "GB/s", "aggregate L2 bandwidth", &P::l2_bandwidth_GBps},
      {"sm_port_bytes_per_clk", "B/clk", "L2 -> one SM bandwidth", &P::sm_port_bytes_per_clk},
      {"dram_latency_cycles", "cycles", "load latency of an L2 miss", &P::dram_latency_cycles},
      {"l2_latency_cycles", "cycles", "load latency of an L2 hit", &P::l2_latency_cycles},
      {"tensor_bf16_TFLOPs", "TFLOP/s", "dense 16-bit tensor-core rate", &P::tensor_bf16_TFLOPs},
      {"tensor_fp8_TFLOPs", "TFLOP/s", "dense fp8 tensor-core rate (0: none)", &P::tensor_fp8_TFLOPs},
      {"tensor_fp4_TFLOPs", "TFLOP/s", "dense fp4 tensor-core rate (0: none)", &P::tensor_fp4_TFLOPs},
      {"tensor_bf16_stream_TFLOPs", "TFLOP/s",
       "every SM streaming bf16 wgmma alone, the rate tensor steps run at (0: not measured, tensor_bf16_TFLOPs)",
       &P::tensor_bf16_stream_TFLOPs},
      {"tensor_fp8_stream_TFLOPs", "TFLOP/s",
       "every SM streaming fp8 wgmma alone, the rate tensor steps run at (0: not measured, tensor_fp8_TFLOPs)",
       &P::tensor_fp8_stream_TFLOPs},
      {"mma_sync_fraction", "", "share of tensor peak reachable with warp-level mma.sync", &P::mma_sync_fraction},
      {"fma_lanes_per_clk", "lanes/clk", "FP32 FMA lanes per SM", &P::fma_lanes_per_clk},
      {"sfu_lanes_per_clk", "lanes/clk", "special-function (exp2) lanes per SM", &P::sfu_lanes_per_clk},
      {"smem_bytes_per_clk", "B/clk", "shared-memory bandwidth per SM (LDS, STS, ldmatrix)", &P::smem_bytes_per_clk},
      {"fma_latency_cycles", "cycles", "dependent FFMA latency", &P::fma_latency_cycles},
      {"mufu_latency_cycles", "cycles", "dependent MUFU.EX2 latency", &P::mufu_latency_cycles},
      {"lds_latency_cycles", "cycles", "dependent shared-memory load latency", &P::lds_latency_cycles},
      {"lds_latency_beside_wgmma_cycles", "cycles",
       "dependent shared-memory load latency while wgmma streams shared-memory operands on the SM",
       &P::lds_latency_beside_wgmma_cycles},
      {"shfl_latency_cycles", "cycles", "dependent warp-shuffle latency", &P::shfl_latency_cycles},
      {"mma_sync_latency_cycles", "cycles", "dependent mma.sync m16n8k16 bf16 latency (0: not measured)",
       &P::mma_sync_latency_cycles},
      {"sync_latency_cycles", "cycles", "mbarrier hand-off between warps (arrive seen by try_wait)", &P::sync_latency_cycles},
      {"bar_sync_latency_cycles", "cycles", "bar.sync of one warpgroup, every warp arriving at once (0: not measured)",
       &P::bar_sync_latency_cycles},
      {"fence_proxy_async_cycles", "cycles",
       "what fence.proxy.async adds to a warp's chain after a shared store (0: not measured, or no async proxy)",
       &P::fence_proxy_async_cycles},
      {"launch_overhead_us", "us", "time per kernel launch in a stream", &P::launch_overhead_us},
      {"queued_launch_us", "us",
       "an empty kernel timed as overlap validate times a workload (queued behind the L2 flush; 0: not measured)",
       &P::queued_launch_us},
      {"queued_kernel_gap_us", "us",
       "each further empty kernel launched back to back after it (0: not measured)", &P::queued_kernel_gap_us},
      {"memcpy2d_GBps", "GB/s",
       "cudaMemcpy2DAsync device to device (copy engine), read + written bytes a second (0: not measured)",
       &P::memcpy2d_GBps},
      {"memcpy2d_fixed_us", "us", "such a copy's time beyond memcpy2d_GBps (0: not measured)", &P::memcpy2d_fixed_us},
      {"tma_l2_bandwidth_GBps", "GB/s", "TMA loads from L2 into every SM's stage ring, best over 1-6 stages (0: not measured)",
       &P::tma_l2_bandwidth_GBps},
      {"tma_l2_latency_ns", "ns", "one 32 KiB TMA load from L2, one in flight per SM, every SM loading (0: not measured)",
       &P::tma_l2_latency_ns},
      {"tma_hbm_bandwidth_GBps", "GB/s", "TMA loads from HBM into every SM's stage ring, read bytes (0: not measured)",
       &P::tma_hbm_bandwidth_GBps},
      {"tma_hbm_latency_ns", "ns", "one 32 KiB TMA load from HBM, one in flight per SM (0: not measured)",
       &P::tma_hbm_latency_ns},
      {"tma_first_load_ns", "ns",
       "a launch's first TMA load from HBM, one box an SM, beyond an empty kernel (0: not measured)",
       &P::tma_first_load_ns},
      {"tma_hbm_walk_bandwidth_GBps", "GB/s",
       "TMA loads from HBM walking each SM's 128-row block along K as a GEMM's k-loop reads B (0: not measured)",
       &P::tma_hbm_walk_bandwidth_GBps},
      {"tma_hbm_walk_latency_ns", "ns",
       "one TMA walk stage (three 16 KiB boxes) from HBM, one in flight per SM, 8 SMs loading (0: not measured)",
       &P::tma_hbm_walk_latency_ns},
      {"tma_hbm_walk_latency_2_ns", "ns", "the same, two stages in flight per SM: issue to landed of a stage (0: not measured)",
       &P::tma_hbm_walk_latency_2_ns},
      {"tma_hbm_walk_latency_3_ns", "ns", "the same, three stages in flight per SM (0: not measured)",
       &P::tma_hbm_walk_latency_3_ns},
      {"tma_walk_sm_GBps", "GB/s",
       "one SM's rate for the TMA walk loads of three tensors at once, from L2 (0: not measured)",
       &P::tma_walk_sm_GBps},
      {"tma_walk_sm_multi_GBps", "GB/s",
       "tma_walk_sm_GBps with 2-4 CTAs on each SM walking at once (0: not measured, tma_walk_sm_GBps)",
       &P::tma_walk_sm_multi_GBps},
      {"tma_walk_prefetch_GBps", "GB/s",
       "an L2 prefetch of a walk box: its bytes over the time it takes from the SM's TMA (0: not measured)",
       &P::tma_walk_prefetch_GBps},
      {"tma_walk_beside_wgmma_fraction", "",
       "share of tma_walk_sm_GBps kept while wgmma streams shared-memory operands on the SM (0: not measured)",
       &P::tma_walk_beside_wgmma_fraction},
      {"tensor_beside_walk_fraction", "",
       "share of the wgmmas' rate kept while the SM's TMA walks the operand tiles they read into shared memory "
       "(calibrate's fed k-loop; 0: not measured)",
       &P::tensor_beside_walk_fraction},
      {"tensor_beside_walk_wide_fraction", "",
       "tensor_beside_walk_fraction for wgmmas of N >= 256 (calibrate's fed k-loop at N = 256; 0: not measured, "
       "tensor_beside_walk_fraction)",
       &P::tensor_beside_walk_wide_fraction},
      {"tensor_clock_MHz", "MHz",
       "SM clock while every SM streams wgmma, each launch after an L2 flush (0: not measured, clock_MHz)",
       &P::tensor_clock_MHz},
      {"tensor_clock_half_sms_ratio", "",
       "SM clock while at most half the SMs stream wgmma over the clock while all do, the same runs, each launch "
       "after an L2 flush (0: not measured, the same clock at any SM count)",
       &P::tensor_clock_half_sms_ratio},
      {"ring_division_cycles", "cycles",
       "a GEMM consumer's k-block beyond its wgmma where the ring depth is not a power of two (0: not measured)",
       &P::ring_division_cycles},
      {"cold_code_cycles_per_KiB", "cycles/KiB",
       "extra cycles of a first pass over code per KiB of SASS, L2 flushed, every SM fetching (0: not measured)",
       &P::cold_code_cycles_per_KiB},
      {"icache_near_KiB", "KiB", "code a scheduler's warps cycle through that still issues at the pipes' rate (0: not measured)",
       &P::icache_near_KiB},
      {"icache_far_KiB", "KiB", "code past icache_near_KiB that still issues at fetch_far_issue_per_clk (0: not measured)",
       &P::icache_far_KiB},
      {"fetch_far_issue_per_clk", "instr/clk", "a scheduler's issue rate over code past icache_near_KiB (0: not measured)",
       &P::fetch_far_issue_per_clk},
      {"fetch_l2_issue_per_clk", "instr/clk", "a scheduler's issue rate over code past icache_far_KiB (0: not measured)",
       &P::fetch_l2_issue_per_clk},
      {"max_clusters_of_2", "clusters", "resident clusters of 2 CTAs, one CTA per SM (0: not measured)",
       &P::max_clusters_of_2},
      {"max_clusters_of_4", "clusters", "resident clusters of 4 CTAs, one CTA per SM (0: not measured)",
       &P::max_clusters_of_4},
      {"fragment_store_bytes_per_clk", "B/clk",
       "every SM storing an L2-resident output as mma accumulator fragments (4-byte pairs), all SMs' bytes per clock "
       "(0: not measured)",
       &P::fragment_store_bytes_per_clk},
      {"line_store_bytes_per_clk", "B/clk",
       "every SM storing an L2-resident output in whole lines (16 bytes a thread), all SMs' bytes per clock (0: not "
       "measured)",
       &P::line_store_bytes_per_clk},
      {"bulk_store_bytes_per_clk", "B/clk",
       "every SM storing an L2-resident output by bulk copies (TMA) from shared memory, all SMs' bytes per clock (0: "
       "not measured)",
       &P::bulk_store_bytes_per_clk},
  };
  return fields;
}

namespace {

std::string allowed_fields() {
  std::string s;
  for (const auto& f : profile_fields()) s += std::string(s.empty() ? "" : ", ") + std::string(f.name);
  return s + ", copy_engine";
}

CopyEngine parse_copy_engine(const std::string& v, std::string_view origin) {
  if (v == "tma") return CopyEngine::Tma;
  if (v == "cp_async") return CopyEngine::CpAsync;
  if (v == "ld_st") return CopyEngine::LdSt;
  fail("{}: copy_engine '{}' is not one of tma, cp_async, ld_st", origin, v);
}

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  OVERLAP_REQUIRE(in, "cannot open profile file '{}'", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

HardwareProfile load_profile_depth(std::string_view name_or_path, int depth);

// Applies `fields` (JSON object: name -> {value, source[, unit]}) onto `p`.
void apply_fields(HardwareProfile& p, const nlohmann::json& fields, std::string_view origin) {
  OVERLAP_REQUIRE(fields.is_object(), "{}: 'fields' must be an object", origin);
  for (const auto& [key, entry] : fields.items()) {
    OVERLAP_REQUIRE(entry.is_object() && entry.contains("value") && entry.contains("source"),
                    "{}: field '{}' must be an object {{\"value\": ..., \"source\": \"...\"}}", origin, key);
    const auto& source = entry.at("source");
    OVERLAP_REQUIRE(source.is_string() && !source.get<std::string>().empty(),
                    "{}: field '{}' needs a non-empty source string", origin, key);
    for (const auto& [k, _] : entry.items())
      OVERLAP_REQUIRE(k == "value" || k == "source" || k == "unit",
                      "{}: field '{}' has unknown key '{}' (allowed: value, source, unit)", origin, key, k);
    if (key == "copy_engine") {
      OVERLAP_REQUIRE(entry["value"].is_string(), "{}: copy_engine must be a string", origin);
      p.copy_engine = parse_copy_engine(entry["value"].get<std::string>(), origin);
      p.sources[key] = source.get<std::string>();
      continue;
    }
    // Fields the model no longer reads, which profiles calibrated before their retirement still
    // hold: read and ignored, so those profiles keep loading.
    static constexpr std::string_view kRetired[] = {
        "tma_walk_stream_GBps",  // calibrate's producer loop, not the TMA (cuda/calibrate/walk_geometry.cu)
    };
    if (std::find(std::begin(kRetired), std::end(kRetired), key) != std::end(kRetired)) continue;
    const ProfileField* field = nullptr;
    for (const auto& f : profile_fields())
      if (f.name == key) field = &f;
    OVERLAP_REQUIRE(field, "{}: unknown profile field '{}' (allowed: {})", origin, key, allowed_fields());
    if (entry.contains("unit")) {
      OVERLAP_REQUIRE(entry["unit"].is_string() && entry["unit"].get<std::string>() == field->unit,
                      "{}: field '{}' is in '{}', got unit {}", origin, key, field->unit, entry["unit"].dump());
    }
    OVERLAP_REQUIRE(entry["value"].is_number(), "{}: field '{}' must be a number, got {}", origin, key,
                    entry["value"].dump());
    const double v = entry["value"].get<double>();
    OVERLAP_REQUIRE(v >= 0, "{}: field '{}' = {} must not be negative", origin, key, v);
    p.*(field->member) = v;
    p.sources[key] = source.get<std::string>();
  }
}

void require_complete(const HardwareProfile& p, std::string_view origin) {
  for (const auto& f : profile_fields())
    OVERLAP_REQUIRE(p.sources.count(std::string(f.name)), "{}: profile '{}' lacks field '{}' ({}, {})",
                    origin, p.name, f.name, f.description, f.unit);
  OVERLAP_REQUIRE(p.sources.count("copy_engine"), "{}: profile '{}' lacks field 'copy_engine'", origin, p.name);
  for (auto positive : {&HardwareProfile::sm_count, &HardwareProfile::clock_MHz, &HardwareProfile::regs_per_sm,
                        &HardwareProfile::smem_per_sm_KiB, &HardwareProfile::max_threads_per_sm,
                        &HardwareProfile::max_ctas_per_sm, &HardwareProfile::hbm_bandwidth_GBps,
                        &HardwareProfile::l2_bandwidth_GBps, &HardwareProfile::sm_port_bytes_per_clk,
                        &HardwareProfile::tensor_bf16_TFLOPs, &HardwareProfile::fma_lanes_per_clk,
                        &HardwareProfile::sfu_lanes_per_clk, &HardwareProfile::smem_bytes_per_clk})
    for (const auto& f : profile_fields())
      if (f.member == positive)
        OVERLAP_REQUIRE(p.*positive > 0, "{}: field '{}' must be positive", origin, f.name);
}

// A key given twice in one object: JSON parsers keep one of them silently, so a profile edited
// by hand could hold a stale value that wins. Found while parsing; the error names the key.
nlohmann::json parse_without_duplicate_keys(std::string_view text, std::string_view origin) {
  std::vector<std::set<std::string>> keys;  // the keys seen in each open object
  std::string duplicate;
  const auto track = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    else if (event == E::object_end && !keys.empty()) keys.pop_back();
    else if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, track);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", origin, e.what());
  }
  OVERLAP_REQUIRE(duplicate.empty(), "{}: key '{}' appears twice in one object", origin, duplicate);
  return j;
}

HardwareProfile parse_profile_depth(std::string_view text, std::string_view origin, int depth) {
  const nlohmann::json j = parse_without_duplicate_keys(text, origin);
  OVERLAP_REQUIRE(j.is_object(), "{}: a profile must be a JSON object", origin);
  for (const auto& [k, _] : j.items())
    OVERLAP_REQUIRE(k == "name" || k == "description" || k == "base" || k == "fields",
                    "{}: unknown top-level key '{}' (allowed: name, description, base, fields)", origin, k);
  OVERLAP_REQUIRE(j.contains("name") && j["name"].is_string(), "{}: profile needs a string 'name'", origin);
  HardwareProfile p;
  if (j.contains("base")) {
    OVERLAP_REQUIRE(j["base"].is_string(), "{}: 'base' must be a profile name or path", origin);
    OVERLAP_REQUIRE(depth < 8, "{}: profile 'base' chain too deep (a cycle?)", origin);
    p = load_profile_depth(j["base"].get<std::string>(), depth + 1);
  }
  p.name = j["name"].get<std::string>();
  if (j.contains("description")) p.description = j["description"].get<std::string>();
  if (j.contains("fields")) apply_fields(p, j["fields"], origin);
  require_complete(p, origin);
  return p;
}

HardwareProfile load_profile_depth(std::string_view name_or_path, int depth) {
  for (const auto& [name, text] : builtin_profile_texts())
    if (name == name_or_path) return parse_profile_depth(text, fmt::format("profile {}", name), depth);
  const std::filesystem::path path(name_or_path);
  if (std::filesystem::exists(path)) return parse_profile_depth(read_file_text(path), path.string(), depth);
  std::string known;
  for (const auto& n : builtin_profile_names()) known += (known.empty() ? "" : ", ") + n;
  fail("unknown hardware profile '{}' (built-in: {}; or a path to a profile JSON file)", name_or_path, known);
}

}  // namespace

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : builtin_profile_texts()) names.emplace_back(name);
  return names;
}

HardwareProfile load_profile(std::string_view name_or_path) { return load_profile_depth(name_or_path, 0); }

HardwareProfile parse_profile(std::string_view json_text, std::string_view origin) {
  return parse_profile_depth(json_text, origin, 0);
}

int HardwareProfile::cluster_slots(int size) const {
  const double measured = size == 2 ? max_clusters_of_2 : size == 4 ? max_clusters_of_4 : 0.0;
  return measured > 0 ? int(measured) : int(sm_count) / std::max(1, size);
}

double HardwareProfile::tensor_clock_boost(double busy_sms) const {
  if (tensor_clock_half_sms_ratio <= 0 || sm_count <= 0) return 1.0;
  const double idle_share = std::clamp((sm_count - busy_sms) / (0.5 * sm_count), 0.0, 1.0);
  return 1.0 + (tensor_clock_half_sms_ratio - 1.0) * idle_share;
}

nlohmann::json HardwareProfile::to_json() const {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& f : profile_fields()) {
    const auto it = sources.find(std::string(f.name));
    fields[std::string(f.name)] = {{"value", this->*(f.member)}, {"source", it == sources.end() ? "" : it->second}};
  }
  const auto it = sources.find("copy_engine");
  fields["copy_engine"] = {{"value", copy_engine_name(copy_engine)},
                           {"source", it == sources.end() ? "" : it->second}};
  return {{"name", name}, {"description", description}, {"fields", fields}};
}

}  // namespace overlap::sim
