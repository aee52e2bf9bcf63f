#include "sim/expr.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"

namespace overlap::sim {
namespace {

// Recursive descent: expr = term {(+|-) term}; term = unary {(*|/) unary};
// unary = -unary | primary; primary = number | name | name(args) | (expr).
class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, double>& vars) : s_(text), vars_(vars) {}

  double parse() {
    const double v = expr();
    skip();
    if (i_ != s_.size()) error(fmt::format("unexpected '{}'", s_.substr(i_, 1)));
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { fail("formula '{}': {} at position {}", s_, what, i_); }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  double expr() {
    double v = term();
    while (true) {
      if (eat('+')) v += term();
      else if (eat('-')) v -= term();
      else return v;
    }
  }
  double term() {
    double v = unary();
    while (true) {
      if (eat('*')) v *= unary();
      else if (eat('/')) {
        const double d = unary();
        if (d == 0) error("division by zero");
        v /= d;
      } else return v;
    }
  }
  double unary() { return eat('-') ? -unary() : primary(); }
  double primary() {
    skip();
    if (eat('(')) {
      const double v = expr();
      if (!eat(')')) error("missing ')'");
      return v;
    }
    if (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
      const std::string rest(s_.substr(i_));
      char* end = nullptr;
      const double v = std::strtod(rest.c_str(), &end);
      i_ += std::size_t(end - rest.c_str());
      return v;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    if (start == i_) error("expected a number, a name or '('");
    const std::string name(s_.substr(start, i_ - start));
    if (eat('(')) {
      std::vector<double> args{expr()};
      while (eat(',')) args.push_back(expr());
      if (!eat(')')) error("missing ')'");
      return call(name, args);
    }
    const auto it = vars_.find(name);
    if (it == vars_.end()) {
      std::string known;
      for (const auto& [k, _] : vars_) known += (known.empty() ? "" : ", ") + k;
      fail("formula '{}': unknown name '{}' (known: {})", s_, name, known);
    }
    return it->second;
  }
  double call(const std::string& f, const std::vector<double>& a) {
    const auto need = [&](std::size_t n) {
      if (a.size() != n) error(fmt::format("{}() takes {} argument(s)", f, n));
    };
    if (f == "ceil_div") {
      need(2);
      if (a[1] == 0) error("ceil_div by zero");
      return std::ceil(a[0] / a[1]);
    }
    if (f == "min") return need(2), std::min(a[0], a[1]);
    if (f == "max") return need(2), std::max(a[0], a[1]);
    if (f == "ceil") return need(1), std::ceil(a[0]);
    if (f == "floor") return need(1), std::floor(a[0]);
    error(fmt::format("unknown function '{}' (known: ceil_div, min, max, ceil, floor)", f));
  }

  std::string_view s_;
  const std::map<std::string, double>& vars_;
  std::size_t i_ = 0;
};

}  // namespace

double eval_formula(std::string_view formula, const std::map<std::string, double>& variables) {
  return Parser(formula, variables).parse();
}

}  // namespace overlap::sim
