#include "sim/schedule_file.hpp"

#include <climits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "sim/expr.hpp"
#include "sim/tile_loop.hpp"

namespace overlap::sim {
namespace {

using Json = nlohmann::ordered_json;
using Vars = std::map<std::string, double>;

void require_keys(const Json& j, const std::set<std::string>& allowed, const std::string& where) {
  OVERLAP_REQUIRE(j.is_object(), "{}: expected a JSON object", where);
  for (const auto& [k, _] : j.items())
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail("{}: unknown key '{}' (allowed: {})", where, k, list);
    }
}

double number(const Json& j, const Vars& vars, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  OVERLAP_REQUIRE(j.is_string(), "{}: expected a number or a formula string", where);
  try {
    return eval_formula(j.get<std::string>(), vars);
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }
}

double number_or(const Json& j, const char* key, double fallback, const Vars& vars, const std::string& where) {
  return j.contains(key) ? number(j[key], vars, where + "." + key) : fallback;
}

int barrier_index(const std::vector<BarrierSpec>& barriers, const std::string& name, const std::string& where) {
  std::string known;
  for (std::size_t i = 0; i < barriers.size(); ++i) {
    if (barriers[i].name == name) return int(i);
    known += (known.empty() ? "" : ", ") + barriers[i].name;
  }
  fail("{}: unknown barrier '{}' (declared: {})", where, name, known);
}

Step parse_op(const Json& j, const Vars& vars, const HardwareProfile& hw, const std::vector<BarrierSpec>* barriers,
              const std::string& where) {
  require_keys(j, {"op", "async", "bytes", "flops", "ops", "ns", "cycles", "barrier", "offset", "every", "phase", "from", "to",
                   "hbm_fraction", "l2_fraction", "engine", "store_as", "precision", "path", "label"},
               where);
  OVERLAP_REQUIRE(j.contains("op") && j["op"].is_string(), "{}: needs \"op\"", where);
  const std::string op = j["op"].get<std::string>();
  const std::string label = j.contains("label") ? j["label"].get<std::string>() : op;
  const auto amount = [&](const char* key) {
    OVERLAP_REQUIRE(j.contains(key), "{}: op '{}' needs \"{}\"", where, op, key);
    return number(j[key], vars, where + "." + key);
  };
  Step s;
  if (op == "load" || op == "store") {
    s = op == "load" ? load(amount("bytes"), number_or(j, "hbm_fraction", 1, vars, where), hw.copy_engine, label)
                     : store(amount("bytes"), hw.copy_engine, label);
    s.l2_fraction = number_or(j, "l2_fraction", 1, vars, where);
    if (j.contains("engine")) {
      const std::string e = j["engine"].get<std::string>();
      OVERLAP_REQUIRE(e == "tma" || e == "cp_async" || e == "ld_st", "{}: engine '{}' is not tma, cp_async or ld_st", where, e);
      s.engine = e == "tma" ? CopyEngine::Tma : e == "cp_async" ? CopyEngine::CpAsync : CopyEngine::LdSt;
      OVERLAP_REQUIRE(!(s.engine == CopyEngine::Tma && hw.copy_engine != CopyEngine::Tma), "{}: {} has no TMA", where, hw.name);
    }
    if (j.contains("store_as")) {
      OVERLAP_REQUIRE(op == "store", "{}: \"store_as\" is for stores", where);
      const std::string a = j["store_as"].is_string() ? j["store_as"].get<std::string>() : "";
      OVERLAP_REQUIRE(a == "fragment" || a == "lines" || a == "bulk", "{}: store_as '{}' is not fragment, lines or bulk",
                      where, a);
      s.store_shape = a == "fragment" ? StoreShape::Fragment : a == "lines" ? StoreShape::Lines : StoreShape::Bulk;
    }
  } else if (op == "mma") {
    const std::string p = j.contains("precision") ? j["precision"].get<std::string>() : "bf16";
    const std::string path = j.contains("path") ? j["path"].get<std::string>() : "warpgroup";
    OVERLAP_REQUIRE(p == "bf16" || p == "fp8" || p == "fp4", "{}: precision '{}' is not bf16, fp8 or fp4", where, p);
    OVERLAP_REQUIRE(path == "warpgroup" || path == "mma_sync", "{}: path '{}' is not warpgroup or mma_sync", where, path);
    s = mma(amount("flops"), p == "bf16" ? Precision::Bf16 : p == "fp8" ? Precision::Fp8 : Precision::Fp4,
            path == "warpgroup" ? TensorPath::Warpgroup : TensorPath::WarpMma, label);
  } else if (op == "fma" || op == "sfu") {
    s = run(op == "fma" ? Unit::Fma : Unit::Sfu, amount("ops"), label);
  } else if (op == "smem") {
    s = run(Unit::Smem, amount("bytes"), label);
  } else if (op == "delay") {
    s = delay(j.contains("cycles") ? amount("cycles") * hw.cycle_ns() : amount("ns"), label);
  } else if (op == "wait" || op == "arrive") {
    OVERLAP_REQUIRE(barriers, "{}: '{}' is only allowed in explicit roles (a tile loop has its own barriers)", where, op);
    OVERLAP_REQUIRE(j.contains("barrier") && j["barrier"].is_string(), "{}: '{}' needs \"barrier\"", where, op);
    const int b = barrier_index(*barriers, j["barrier"].get<std::string>(), where);
    s = op == "wait" ? wait(b, 0, label) : arrive(b, 0);
  } else {
    fail("{}: unknown op '{}' (known: load, store, mma, fma, sfu, smem, delay, wait, arrive)", where, op);
  }
  if (j.value("async", false)) {
    OVERLAP_REQUIRE(s.kind == StepKind::Run, "{}: only load/store/mma/fma/sfu/smem can be async", where);
    s.kind = StepKind::Issue;
  }
  if (j.contains("barrier") && op != "wait" && op != "arrive") {
    OVERLAP_REQUIRE(barriers, "{}: \"barrier\" is only allowed in explicit roles", where);
    s.barrier = barrier_index(*barriers, j["barrier"].get<std::string>(), where);
  }
  s.offset = int(number_or(j, "offset", 0, vars, where));
  s.every = int(number_or(j, "every", 1, vars, where));
  s.phase = int(number_or(j, "phase", 0, vars, where));
  s.from = int(number_or(j, "from", INT_MIN, vars, where));
  s.to = int(number_or(j, "to", INT_MAX, vars, where));
  OVERLAP_REQUIRE(s.every >= 1, "{}: every must be at least 1", where);
  return s;
}

std::vector<Step> parse_ops(const Json& j, const char* key, const Vars& vars, const HardwareProfile& hw,
                            const std::vector<BarrierSpec>* barriers, const std::string& where) {
  std::vector<Step> out;
  if (!j.contains(key)) return out;
  OVERLAP_REQUIRE(j[key].is_array(), "{}.{}: expected an array of ops", where, key);
  for (std::size_t i = 0; i < j[key].size(); ++i)
    out.push_back(parse_op(j[key][i], vars, hw, barriers, fmt::format("{}.{}[{}]", where, key, i)));
  return out;
}

KernelSpec parse_kernel(const Json& j, Vars vars, const HardwareProfile& hw, const std::string& where) {
  require_keys(j, {"name", "ctas", "threads", "registers_per_cta", "regs_per_thread", "smem_bytes", "cluster_size",
                   "tiles", "barriers", "roles", "loop", "schedule"},
               where);
  KernelSpec k;
  k.name = j.value("name", std::string("kernel"));
  OVERLAP_REQUIRE(j.contains("ctas"), "{}: needs \"ctas\"", where);
  k.ctas = std::int64_t(number(j["ctas"], vars, where + ".ctas"));
  OVERLAP_REQUIRE(k.ctas >= 1, "{}: ctas must be at least 1", where);
  k.smem_bytes = std::int64_t(number_or(j, "smem_bytes", 0, vars, where));
  k.cluster_size = int(number_or(j, "cluster_size", 1, vars, where));
  const int regs_per_thread = int(number_or(j, "regs_per_thread", 128, vars, where));

  if (j.contains("loop")) {
    OVERLAP_REQUIRE(!j.contains("roles"), "{}: give either \"loop\" + \"schedule\" or \"roles\", not both", where);
    const Json& l = j["loop"];
    const std::string lw = where + ".loop";
    require_keys(l, {"tiles", "loads", "compute", "output", "handoff", "carried", "stores", "async_stores", "prologue",
                     "epilogue"},
                 lw);
    TileLoop loop;
    loop.tiles = int(number_or(l, "tiles", 1, vars, lw));
    loop.loads = parse_ops(l, "loads", vars, hw, nullptr, lw);
    loop.compute = parse_ops(l, "compute", vars, hw, nullptr, lw);
    loop.output = parse_ops(l, "output", vars, hw, nullptr, lw);
    loop.handoff = parse_ops(l, "handoff", vars, hw, nullptr, lw);
    loop.carried = parse_ops(l, "carried", vars, hw, nullptr, lw);
    loop.stores = parse_ops(l, "stores", vars, hw, nullptr, lw);
    loop.prologue = parse_ops(l, "prologue", vars, hw, nullptr, lw);
    loop.epilogue = parse_ops(l, "epilogue", vars, hw, nullptr, lw);
    loop.async_stores = l.value("async_stores", false);
    const Json s = j.contains("schedule") ? j["schedule"] : Json::object();
    const std::string sw = where + ".schedule";
    require_keys(s, {"kind", "stages", "compute_warps", "producer_warps", "consumer_warpgroups", "consumers_alternate",
                     "run_length", "epilogue_warpgroups"},
                 sw);
    LoopSchedule sch;
    const std::string kind = s.value("kind", std::string("prefetch"));
    OVERLAP_REQUIRE(kind == "prefetch" || kind == "warp_specialized", "{}: kind '{}' is not prefetch or warp_specialized",
                    sw, kind);
    sch.kind = kind == "prefetch" ? LoopSchedule::Kind::Prefetch : LoopSchedule::Kind::WarpSpecialized;
    sch.stages = int(number_or(s, "stages", 1, vars, sw));
    sch.compute_warps = int(number_or(s, "compute_warps", 4, vars, sw));
    sch.producer_warps = int(number_or(s, "producer_warps", 1, vars, sw));
    sch.consumer_warpgroups = int(number_or(s, "consumer_warpgroups", 1, vars, sw));
    sch.consumers_alternate = s.value("consumers_alternate", false);
    sch.run_length = int(number_or(s, "run_length", 1, vars, sw));
    sch.epilogue_warpgroups = int(number_or(s, "epilogue_warpgroups", 0, vars, sw));
    build_tile_loop(k, loop, sch);
  } else {
    OVERLAP_REQUIRE(j.contains("roles") && j["roles"].is_array(), "{}: needs \"loop\" or a \"roles\" array", where);
    k.tiles = int(number_or(j, "tiles", 1, vars, where));
    if (j.contains("barriers"))
      for (std::size_t i = 0; i < j["barriers"].size(); ++i) {
        const Json& b = j["barriers"][i];
        const std::string bw = fmt::format("{}.barriers[{}]", where, i);
        require_keys(b, {"name", "arrivals"}, bw);
        k.barriers.push_back({b.value("name", std::string()), int(number_or(b, "arrivals", 1, vars, bw))});
      }
    for (std::size_t i = 0; i < j["roles"].size(); ++i) {
      const Json& r = j["roles"][i];
      const std::string rw = fmt::format("{}.roles[{}]", where, i);
      require_keys(r, {"name", "warps", "regs_per_thread", "first_block", "block_stride", "run_length", "prologue", "body",
                       "epilogue"},
                   rw);
      Role role;
      role.name = r.value("name", fmt::format("role{}", i));
      role.warps = int(number_or(r, "warps", 4, vars, rw));
      role.first_block = int(number_or(r, "first_block", 0, vars, rw));
      role.block_stride = int(number_or(r, "block_stride", 1, vars, rw));
      role.run_length = int(number_or(r, "run_length", 1, vars, rw));
      OVERLAP_REQUIRE(role.warps >= 1 && role.block_stride >= 1 && role.run_length >= 1,
                      "{}: warps, block_stride and run_length must be at least 1", rw);
      role.prologue = parse_ops(r, "prologue", vars, hw, &k.barriers, rw);
      role.body = parse_ops(r, "body", vars, hw, &k.barriers, rw);
      role.epilogue = parse_ops(r, "epilogue", vars, hw, &k.barriers, rw);
      k.roles.push_back(std::move(role));
    }
  }
  int warps = 0;
  for (const auto& r : k.roles) warps += r.warps;
  k.threads_per_cta = int(number_or(j, "threads", 32.0 * warps, vars, where));
  k.regs_per_cta = std::int64_t(number_or(j, "registers_per_cta", double(regs_for_warps(warps, regs_per_thread)), vars, where));
  return k;
}

}  // namespace

ScheduleFile parse_schedule(const std::string& text, const std::string& origin) {
  ScheduleFile f;
  f.origin = origin;
  try {
    f.json = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", origin, e.what());
  }
  require_keys(f.json, {"workload", "name", "description", "params", "kernels"}, origin);
  OVERLAP_REQUIRE(f.json.contains("workload") && f.json["workload"].is_string(),
                  "{}: needs \"workload\" (whose shape keys the formulas use)", origin);
  OVERLAP_REQUIRE(f.json.contains("kernels") && f.json["kernels"].is_array() && !f.json["kernels"].empty(),
                  "{}: needs a non-empty \"kernels\" array", origin);
  f.workload = f.json["workload"].get<std::string>();
  f.name = f.json.value("name", std::string("schedule"));
  f.description = f.json.value("description", std::string());
  return f;
}

ScheduleFile read_schedule_file(const std::string& path) {
  std::ifstream in(path);
  OVERLAP_REQUIRE(in, "cannot open schedule file '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_schedule(ss.str(), path);
}

std::vector<KernelSpec> build_schedule(const ScheduleFile& f, const HardwareProfile& hw, const ShapeArgs& shape) {
  Vars vars;
  for (const auto& [k, v] : shape.items()) vars[k] = double(v);
  vars["sm_count"] = hw.sm_count;
  vars["compute_capability"] = hw.compute_capability;
  if (f.json.contains("params")) {
    OVERLAP_REQUIRE(f.json["params"].is_object(), "{}: params must be an object", f.origin);
    for (const auto& [k, v] : f.json["params"].items()) vars[k] = number(v, vars, f.origin + ".params." + k);
  }
  std::vector<KernelSpec> out;
  for (std::size_t i = 0; i < f.json["kernels"].size(); ++i)
    out.push_back(parse_kernel(f.json["kernels"][i], vars, hw, fmt::format("{}: kernels[{}]", f.origin, i)));
  return out;
}

}  // namespace overlap::sim
