#include "native_ops/testing/arg_spec.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ops/empty_strided.h>
#include <c10/core/Device.h>

#include "native_ops/error.h"

namespace native_ops {

namespace {

const std::map<std::string, at::ScalarType>& dtypes() {
  static const std::map<std::string, at::ScalarType> names = {
      {"f16", at::kHalf},    {"fp16", at::kHalf},     {"half", at::kHalf},   {"bf16", at::kBFloat16},
      {"f32", at::kFloat},   {"fp32", at::kFloat},    {"float", at::kFloat}, {"f64", at::kDouble},
      {"fp64", at::kDouble}, {"double", at::kDouble}, {"i8", at::kChar},     {"i16", at::kShort},
      {"i32", at::kInt},     {"i64", at::kLong},      {"u8", at::kByte},     {"bool", at::kBool},
  };
  return names;
}

class SpecParser {
 public:
  explicit SpecParser(std::string_view spec) : spec_(spec) {}

  torch::jit::Stack parse() {
    torch::jit::Stack arguments;
    skip_space();
    if (at_end()) return arguments;
    while (true) {
      arguments.push_back(argument());
      skip_space();
      if (at_end()) return arguments;
      expect(',', "',' between arguments");
    }
  }

 private:
  c10::IValue argument() {
    skip_space();
    if (peek() == '[') return c10::IValue(int_list('[', ']'));
    const size_t start = pos_;
    const std::string word = identifier();
    if (word.empty()) return number();
    if (word == "true" || word == "false") return c10::IValue(word == "true");
    if (word == "none" || word == "None") return c10::IValue();
    const auto dtype = dtypes().find(word);
    if (dtype == dtypes().end()) {
      pos_ = start;
      fail("a dtype (f32, bf16, ...), a number, true, false, none or [ints]");
    }
    skip_space();
    if (at_end() || peek() == ',') return c10::IValue(dtype->second);  // a ScalarType argument
    return c10::IValue(tensor(dtype->second));
  }

  at::Tensor tensor(at::ScalarType dtype) {
    const std::vector<int64_t> sizes = int_list('[', ']');
    std::vector<int64_t> strides = contiguous_strides(sizes);
    if (peek() == '{') {
      const size_t start = pos_;
      strides = int_list('{', '}');
      if (strides.size() != sizes.size()) fail("as many strides as sizes");
      if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; })) {
        pos_ = start;
        fail("strides of 0 or more (torch makes no tensor with a negative stride)");
      }
    }
    c10::Device device(c10::kCPU);
    if (peek() == '@') {
      ++pos_;
      const size_t start = pos_;
      while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == ':')) ++pos_;
      const std::string name(spec_.substr(start, pos_ - start));
      try {
        device = c10::Device(name);
      } catch (const std::exception&) {
        pos_ = start;
        fail("a device such as cpu, cuda or cuda:1");
      }
    }
    if (!storage_fits(sizes, strides, c10::elementSize(dtype))) {
      throw Error("argument spec \"" + std::string(spec_) + "\": tensors over " +
                  std::to_string(kMaxStorageBytes >> 30) + " GiB in all (or with negative sizes) are not made to " +
                  "explain a call: describe smaller ones (conds see only sizes, strides, dtype and device)");
    }
    try {
      return at::empty_strided(sizes, strides, at::TensorOptions().dtype(dtype).device(device));
    } catch (const c10::Error& e) {
      throw Error("argument spec \"" + std::string(spec_) + "\": cannot make a " + device.str() + " tensor here (" +
                  e.what_without_backtrace() + ")" +
                  (device.is_cpu() ? std::string() : "; describe the inputs on a device this machine has"));
    }
  }

  // The most memory one spec's tensors take together: beyond it, sizes are refused before
  // any allocation (or any overflowing arithmetic) is attempted. Found by fuzzing: a
  // 3 GB spec was allocated just to ask conds about its metadata.
  static constexpr int64_t kMaxStorageBytes = int64_t{1} << 30;

  // Contiguous strides; one that overflows is clamped (storage_fits() then refuses it).
  static std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> strides(sizes.size());
    int64_t stride = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = stride;
      if (__builtin_mul_overflow(stride, std::max<int64_t>(sizes[i], 1), &stride)) stride = INT64_MAX;
    }
    return strides;
  }

  // Whether the storage the sizes and strides span is at most kMaxStorageBytes.
  bool storage_fits(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, size_t element) {
    if (std::any_of(sizes.begin(), sizes.end(), [](int64_t size) { return size < 0; })) return false;
    if (std::count(sizes.begin(), sizes.end(), 0) > 0) return true;  // an empty tensor needs no storage
    int64_t extent = 1;                                              // elements
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t span = 0;
      if (strides[i] == INT64_MIN || __builtin_mul_overflow(sizes[i] - 1, std::abs(strides[i]), &span) ||
          __builtin_add_overflow(extent, span, &extent)) {
        return false;
      }
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(extent, static_cast<int64_t>(element), &bytes) ||
        bytes > kMaxStorageBytes - allocated_) {
      return false;
    }
    allocated_ += bytes;
    return true;
  }

  std::vector<int64_t> int_list(char open, char close) {
    expect(open, std::string("'") + open + "'");
    std::vector<int64_t> values;
    skip_space();
    if (peek() == close) {
      ++pos_;
      return values;
    }
    while (true) {
      skip_space();
      const c10::IValue value = number();
      if (!value.isInt()) fail("an integer");
      values.push_back(value.toInt());
      skip_space();
      if (peek() == close) {
        ++pos_;
        return values;
      }
      expect(',', std::string("',' or '") + close + "'");
    }
  }

  c10::IValue number() {
    const size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    bool is_float = false;
    while (!at_end() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.' || peek() == 'e' ||
                         ((peek() == '-' || peek() == '+') && (spec_[pos_ - 1] == 'e')))) {
      is_float |= peek() == '.' || peek() == 'e';
      ++pos_;
    }
    const std::string text(spec_.substr(start, pos_ - start));
    try {
      size_t used = 0;
      if (is_float) {
        const double value = std::stod(text, &used);
        if (used == text.size()) return c10::IValue(value);
      } else {
        const int64_t value = std::stoll(text, &used);
        if (used == text.size()) return c10::IValue(value);
      }
    } catch (const std::exception&) {
    }
    pos_ = start;
    fail("a number");
  }

  std::string identifier() {
    const size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) {
      if (pos_ == start && std::isdigit(static_cast<unsigned char>(peek()))) break;
      ++pos_;
    }
    return std::string(spec_.substr(start, pos_ - start));
  }

  void expect(char c, const std::string& what) {
    skip_space();
    if (peek() != c) fail(what);
    ++pos_;
  }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  bool at_end() const { return pos_ >= spec_.size(); }
  char peek() const { return at_end() ? '\0' : spec_[pos_]; }

  [[noreturn]] void fail(const std::string& expected) const {
    throw Error("argument spec \"" + std::string(spec_) + "\", at column " + std::to_string(pos_ + 1) + ": expected " +
                expected + (at_end() ? " but the spec ends" : ", found '" + std::string(1, peek()) + "'"));
  }

  std::string_view spec_;
  size_t pos_ = 0;
  int64_t allocated_ = 0;  // bytes of the tensors made so far
};

}  // namespace

torch::jit::Stack parse_arg_spec(std::string_view spec) { return SpecParser(spec).parse(); }

}  // namespace native_ops
