// Benchmark reports for machines and people: JSON (written and read back), CSV and an SVG chart.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "native_ops/error.h"
#include "native_ops/testing/report.h"

namespace native_ops {

namespace {

nlohmann::json timing_json(const Timing& t) {
  return {{"median_ns", t.median_ns},
          {"q1_ns", t.q1_ns},
          {"q3_ns", t.q3_ns},
          {"rounds", t.rounds},
          {"calls_per_round", t.calls_per_round},
          {"noisy", t.noisy()}};
}

nlohmann::json features_json(const std::vector<std::pair<std::string, int64_t>>& features) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : features) object[name] = value;
  return object;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string xml_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

template <class T>
std::string fixed(T value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

// Reports of the largest grids are a few MB: far below this.
constexpr uintmax_t kMaxReportBytes = uintmax_t{256} << 20;

// Reads a report of bench_json's form; errors name the file, the JSON pointer of the field
// and what was expected there.
class ReportReader {
 public:
  explicit ReportReader(std::string source) : source_(std::move(source)) {}

  BenchReport read(const std::string& text) {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      fail("", std::string("is not JSON (") + e.what() + ")");
    }
    if (!doc.is_object()) fail("", "is not a JSON object");
    if (number(doc, "version", "") != 1) fail("/version", "expected 1, the version native-ops bench writes");
    BenchReport report;
    const nlohmann::json& devices = array(doc, "devices", "");
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string where = "/devices/" + std::to_string(i);
      report.devices.push_back({text_of(devices[i], "device", where), text_of(devices[i], "name", where),
                                number(devices[i], "copy_gbps", where),
                                static_cast<int>(count(devices[i], "threads", where, 1 << 20))});
    }
    const nlohmann::json& rows = array(doc, "rows", "");
    for (size_t i = 0; i < rows.size(); ++i) report.rows.push_back(row(rows[i], "/rows/" + std::to_string(i)));
    return report;
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error("report " + source_ + (where.empty() ? "" : ": " + where) + ": " + what +
                ": give a report that native-ops bench --json-file wrote");
  }

  const nlohmann::json& field(const nlohmann::json& object, const char* key, const std::string& where) const {
    if (!object.is_object()) fail(where, "expected an object");
    const auto found = object.find(key);
    if (found == object.end()) fail(where, std::string("\"") + key + "\" is missing");
    return *found;
  }

  double number(const nlohmann::json& object, const char* key, const std::string& where) const {
    const nlohmann::json& value = field(object, key, where);
    if (!value.is_number()) fail(where + "/" + key, "expected a number");
    return value.get<double>();
  }

  std::string text_of(const nlohmann::json& object, const char* key, const std::string& where) const {
    const nlohmann::json& value = field(object, key, where);
    if (!value.is_string()) fail(where + "/" + key, "expected a string");
    return value.get<std::string>();
  }

  // A whole number from 0 to `most`.
  size_t count(const nlohmann::json& object, const char* key, const std::string& where, double most) const {
    const double value = number(object, key, where);
    if (!(value >= 0 && value <= most) || value != std::floor(value)) {
      fail(where + "/" + key, "expected a whole number from 0 to " + fixed(most, 0));
    }
    return static_cast<size_t>(value);
  }

  bool boolean(const nlohmann::json& object, const char* key, const std::string& where) const {
    const nlohmann::json& value = field(object, key, where);
    if (!value.is_boolean()) fail(where + "/" + key, "expected true or false");
    return value.get<bool>();
  }

  const nlohmann::json& array(const nlohmann::json& object, const char* key, const std::string& where) const {
    const nlohmann::json& value = field(object, key, where);
    if (!value.is_array()) fail(where + "/" + key, "expected an array");
    return value;
  }

  // [low, high]
  std::pair<double, double> interval(const nlohmann::json& object, const char* key, const std::string& where) const {
    const nlohmann::json& value = array(object, key, where);
    if (value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
      fail(where + "/" + key, "expected [low, high]");
    }
    return {value[0].get<double>(), value[1].get<double>()};
  }

  Timing timing(const nlohmann::json& object, const char* key, const std::string& where) const {
    const std::string at = where + "/" + key;
    const nlohmann::json& value = field(object, key, where);
    return {number(value, "median_ns", at), number(value, "q1_ns", at), number(value, "q3_ns", at),
            count(value, "rounds", at, 1e15), count(value, "calls_per_round", at, 1e15)};
  }

  BenchRow row(const nlohmann::json& object, const std::string& where) const {
    BenchRow r;
    r.node_id = text_of(object, "node", where);
    r.dsl = text_of(object, "dsl", where);
    r.op_symbol = text_of(object, "op", where);
    r.device = text_of(object, "device", where);
    r.shape = text_of(object, "shape", where);
    r.accepted = boolean(object, "accepted", where);
    r.decline_reason = text_of(object, "decline_reason", where);
    r.timed = boolean(object, "timed", where);
    r.original = timing(object, "original", where);
    r.impl = timing(object, "impl", where);
    r.routed = timing(object, "routed", where);
    r.bytes = number(object, "bytes", where);
    r.flops = number(object, "flops", where);
    r.original_gbps = number(object, "original_gbps", where);
    r.override_gbps = number(object, "override_gbps", where);
    r.copy_fraction = number(object, "copy_fraction", where);
    r.speedup = number(object, "speedup", where);
    std::tie(r.speedup_low, r.speedup_high) = interval(object, "speedup_ci", where);
    r.host_overhead_ns = number(object, "host_overhead_ns", where);
    std::tie(r.host_overhead_low, r.host_overhead_high) = interval(object, "host_overhead_ci", where);
    r.host_original_ns = number(object, "host_original_ns", where);
    r.host_routed_ns = number(object, "host_routed_ns", where);
    for (const nlohmann::json& flag : array(object, "flags", where)) {
      if (!flag.is_string()) fail(where + "/flags", "expected strings");
      r.flags.push_back(flag.get<std::string>());
    }
    // Reports written before grids and as-routed runs lack these.
    if (object.contains("dtype")) r.dtype = text_of(object, "dtype", where);
    if (object.contains("features")) {
      const nlohmann::json& features = object["features"];
      if (!features.is_object()) fail(where + "/features", "expected an object of integers");
      for (const auto& [name, value] : features.items()) {
        if (!value.is_number_integer()) fail(where + "/features/" + name, "expected an integer");
        r.features.emplace_back(name, value.get<int64_t>());
      }
    }
    if (object.contains("fastest")) r.fastest = text_of(object, "fastest", where);
    if (object.contains("routed_over_fastest")) {
      r.routed_over_fastest = number(object, "routed_over_fastest", where);
      std::tie(r.routed_over_fastest_low, r.routed_over_fastest_high) =
          interval(object, "routed_over_fastest_ci", where);
    }
    return r;
  }

  std::string source_;
};

}  // namespace

BenchReport parse_bench_report(const std::string& text, const std::string& source) {
  return ReportReader(source).read(text);
}

BenchReport read_bench_report(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string fix = ": give the path of a report that native-ops bench --json-file wrote";
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error) throw Error("report " + path + ": cannot be read: " + error.message() + fix);
  if (!fs::is_regular_file(status)) throw Error("report " + path + ": is not a regular file" + fix);
  const uintmax_t size = fs::file_size(path, error);
  if (error || size > kMaxReportBytes) {
    throw Error("report " + path + ": " + (error ? error.message() : std::to_string(size) + " bytes is too large") +
                fix);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("report " + path + ": cannot be opened: " + std::strerror(errno) + fix);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_bench_report(text.str(), path);
}

std::string bench_json(const BenchReport& report) {
  nlohmann::json devices = nlohmann::json::array();
  for (const BenchDevice& d : report.devices) {
    devices.push_back({{"device", d.device}, {"name", d.name}, {"copy_gbps", d.copy_gbps}, {"threads", d.threads}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchRow& r : report.rows) {
    rows.push_back({{"node", r.node_id},
                    {"dsl", r.dsl},
                    {"op", r.op_symbol},
                    {"device", r.device},
                    {"shape", r.shape},
                    {"dtype", r.dtype},
                    {"features", features_json(r.features)},
                    {"accepted", r.accepted},
                    {"decline_reason", r.decline_reason},
                    {"timed", r.timed},
                    {"original", timing_json(r.original)},
                    {"impl", timing_json(r.impl)},
                    {"routed", timing_json(r.routed)},
                    {"bytes", r.bytes},
                    {"flops", r.flops},
                    {"original_gbps", r.original_gbps},
                    {"override_gbps", r.override_gbps},
                    {"copy_fraction", r.copy_fraction},
                    {"speedup", r.speedup},
                    {"speedup_ci", {r.speedup_low, r.speedup_high}},
                    {"host_overhead_ns", r.host_overhead_ns},
                    {"host_overhead_ci", {r.host_overhead_low, r.host_overhead_high}},
                    {"host_original_ns", r.host_original_ns},
                    {"host_routed_ns", r.host_routed_ns},
                    {"fastest", r.fastest},
                    {"routed_over_fastest", r.routed_over_fastest},
                    {"routed_over_fastest_ci", {r.routed_over_fastest_low, r.routed_over_fastest_high}},
                    {"flags", r.flags}});
  }
  return nlohmann::json{{"version", 1}, {"devices", devices}, {"rows", rows}}.dump(2);
}

std::string bench_csv(const BenchReport& report) {
  std::ostringstream csv;
  csv << "node,dsl,op,device,shape,accepted,timed,original_ns,original_iqr_ns,impl_ns,impl_iqr_ns,routed_ns,"
         "routed_iqr_ns,bytes,flops,original_gbps,override_gbps,copy_fraction,speedup,speedup_low,speedup_high,"
         "host_overhead_ns,host_overhead_low_ns,host_overhead_high_ns,host_original_ns,host_routed_ns,fastest,"
         "routed_over_fastest,flags,decline_reason\n";
  for (const BenchRow& r : report.rows) {
    std::string flags;
    for (const std::string& flag : r.flags) flags += (flags.empty() ? "" : ";") + flag;
    csv << csv_field(r.node_id) << "," << r.dsl << "," << csv_field(r.op_symbol) << "," << r.device << ","
        << csv_field(r.shape) << "," << r.accepted << "," << r.timed << "," << r.original.median_ns << ","
        << r.original.q3_ns - r.original.q1_ns << "," << r.impl.median_ns << "," << r.impl.q3_ns - r.impl.q1_ns << ","
        << r.routed.median_ns << "," << r.routed.q3_ns - r.routed.q1_ns << "," << r.bytes << "," << r.flops << ","
        << r.original_gbps << "," << r.override_gbps << "," << r.copy_fraction << "," << r.speedup << ","
        << r.speedup_low << "," << r.speedup_high << "," << r.host_overhead_ns << "," << r.host_overhead_low << ","
        << r.host_overhead_high << "," << r.host_original_ns << "," << r.host_routed_ns << "," << csv_field(r.fastest)
        << "," << r.routed_over_fastest << "," << csv_field(flags) << "," << csv_field(r.decline_reason) << "\n";
  }
  return csv.str();
}

std::string bench_svg(const BenchReport& report) {
  // Layout: a label column, then a log2 axis from 1/8x to 16x with 1x marked.
  constexpr double kLabelWidth = 330, kPlotWidth = 520, kRowHeight = 20, kTop = 56, kPanelGap = 34;
  constexpr double kMinLog = -3, kMaxLog = 4;
  const auto x_of = [&](double speedup) {
    const double log = std::clamp(std::log2(std::max(speedup, 1e-9)), kMinLog, kMaxLog);
    return kLabelWidth + (log - kMinLog) / (kMaxLog - kMinLog) * kPlotWidth;
  };
  std::vector<std::string> dsls;
  for (const BenchRow& r : report.rows) {
    if (r.timed && std::find(dsls.begin(), dsls.end(), r.dsl) == dsls.end()) dsls.push_back(r.dsl);
  }
  std::ostringstream body;
  double y = kTop;
  for (const std::string& dsl : dsls) {
    y += kPanelGap;
    body << "<text x=\"10\" y=\"" << y - 12 << "\" class=\"panel\">dsl " << xml_text(dsl) << "</text>\n";
    const double panel_top = y;
    for (const BenchRow& r : report.rows) {
      if (!r.timed || r.dsl != dsl) continue;
      const double mid = y + kRowHeight / 2;
      const double x1 = x_of(1), xs = x_of(r.speedup);
      const std::string label = r.op_symbol + " " + r.shape + " @" + r.device;
      body << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << mid + 4 << "\" class=\"label\">" << xml_text(label)
           << "</text>\n";
      const bool faster = r.speedup >= 1;
      body << "<rect x=\"" << std::min(x1, xs) << "\" y=\"" << y + 3 << "\" width=\""
           << std::max(std::abs(xs - x1), 1.0) << "\" height=\"" << kRowHeight - 6 << "\" class=\""
           << (faster ? "faster" : "slower") << (r.accepted ? "" : " declined") << "\"/>\n";
      body << "<line x1=\"" << x_of(r.speedup_low) << "\" x2=\"" << x_of(r.speedup_high) << "\" y1=\"" << mid
           << "\" y2=\"" << mid << "\" class=\"ci\"/>\n";
      std::string note = fixed(r.speedup, 2) + "x";
      if (!r.accepted) note += " (declined)";
      for (const std::string& flag : r.flags) note += ", " + flag;
      body << "<text x=\"" << kLabelWidth + kPlotWidth + 8 << "\" y=\"" << mid + 4 << "\" class=\"value\">"
           << xml_text(note) << "</text>\n";
      y += kRowHeight;
    }
    for (double log = kMinLog; log <= kMaxLog; log += 1) {
      const double x = kLabelWidth + (log - kMinLog) / (kMaxLog - kMinLog) * kPlotWidth;
      body << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << panel_top << "\" y2=\"" << y << "\" class=\""
           << (log == 0 ? "one" : "grid") << "\"/>\n";
      const std::string tick = log < 0 ? "1/" + std::to_string(1 << static_cast<int>(-log)) + "x"
                                       : std::to_string(1 << static_cast<int>(log)) + "x";
      body << "<text x=\"" << x << "\" y=\"" << y + 14 << "\" class=\"tick\">" << tick << "</text>\n";
    }
    y += 18;
  }
  std::string devices;
  for (const BenchDevice& d : report.devices) {
    devices += (devices.empty() ? "" : "; ") + d.device + ": " + d.name + ", copy " + fixed(d.copy_gbps, 1) + " GB/s";
  }
  const double width = kLabelWidth + kPlotWidth + 290;
  const double height = y + 20;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<style>.title{font-size:15px;font-weight:bold}.panel{font-size:13px;font-weight:bold}"
         ".label{text-anchor:end}.tick{text-anchor:middle;fill:#555;font-size:10px}.value{fill:#222}"
         ".faster{fill:#2e8b57}.slower{fill:#c0392b}.declined{fill-opacity:0.25;stroke-width:1.5}"
         ".faster.declined{stroke:#2e8b57}.slower.declined{stroke:#c0392b}"
         ".ci{stroke:#111;stroke-width:1.5}.grid{stroke:#ddd}.one{stroke:#111;stroke-dasharray:4 3}</style>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" class=\"title\">native-ops bench: speedup over aten (aten time / override time), "
         "median and 95% interval</text>\n"
      << "<text x=\"10\" y=\"40\">" << xml_text(devices) << "</text>\n"
      << body.str() << "</svg>\n";
  return svg.str();
}

}  // namespace native_ops
