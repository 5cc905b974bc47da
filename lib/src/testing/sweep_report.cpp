// Conformance sweep results for machines: JSON and JUnit XML.
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "native_ops/testing/report.h"

namespace native_ops {

namespace {

struct Totals {
  size_t passed = 0, failed = 0, skipped = 0;
  double seconds = 0;
  void add(const SampleResult& result) {
    (result.outcome == Outcome::passed ? passed : result.outcome == Outcome::failed ? failed : skipped) += 1;
    seconds += result.seconds;
  }
};

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string mismatch_text(const Mismatch& m) {
  std::ostringstream text;
  text << m.check << ": " << m.message;
  if (m.max_abs_error != 0 || m.max_rel_error != 0) {
    text << " (max abs error " << m.max_abs_error << ", max rel error " << m.max_rel_error << ")";
  }
  return text.str();
}

}  // namespace

std::string sweep_json(const std::vector<SampleResult>& results) {
  Totals totals;
  nlohmann::json list = nlohmann::json::array();
  for (const SampleResult& r : results) {
    totals.add(r);
    nlohmann::json mismatches = nlohmann::json::array();
    for (const Mismatch& m : r.mismatches) {
      mismatches.push_back({{"check", m.check},
                            {"message", m.message},
                            {"max_abs_error", m.max_abs_error},
                            {"max_rel_error", m.max_rel_error},
                            {"first_index", m.first_index}});
    }
    list.push_back({{"node", r.node_id},
                    {"dsl", r.dsl},
                    {"op", r.op_symbol},
                    {"device", r.device},
                    {"dtype", r.dtype},
                    {"sample", r.sample},
                    {"class", r.sample_class},
                    {"meant_for", r.meant_for},
                    {"outcome", to_string(r.outcome)},
                    {"skip_reason", r.skip_reason},
                    {"seconds", r.seconds},
                    {"mismatches", mismatches}});
  }
  return nlohmann::json{{"version", 1},
                        {"passed", totals.passed},
                        {"failed", totals.failed},
                        {"skipped", totals.skipped},
                        {"seconds", totals.seconds},
                        {"results", list}}
      .dump(2);
}

std::string sweep_junit(const std::vector<SampleResult>& results) {
  std::map<std::string, std::vector<const SampleResult*>> by_node;
  std::vector<std::string> order;
  Totals all;
  for (const SampleResult& r : results) {
    if (by_node.find(r.node_id) == by_node.end()) order.push_back(r.node_id);
    by_node[r.node_id].push_back(&r);
    all.add(r);
  }
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"native-ops test\" tests=\"" << results.size() << "\" failures=\"" << all.failed
      << "\" skipped=\"" << all.skipped << "\" time=\"" << all.seconds << "\">\n";
  for (const std::string& node : order) {
    Totals totals;
    for (const SampleResult* r : by_node[node]) totals.add(*r);
    xml << "  <testsuite name=\"" << xml_escaped(node) << "\" tests=\"" << by_node[node].size() << "\" failures=\""
        << totals.failed << "\" skipped=\"" << totals.skipped << "\" time=\"" << totals.seconds << "\">\n";
    for (const SampleResult* r : by_node[node]) {
      const std::string name =
          r->device + " " + (r->dtype.empty() ? "" : r->dtype + " ") + r->sample_class + ": " + r->sample;
      xml << "    <testcase classname=\"" << xml_escaped(r->op_symbol + "." + node) << "\" name=\"" << xml_escaped(name)
          << "\" time=\"" << r->seconds << "\"";
      if (r->outcome == Outcome::passed) {
        xml << "/>\n";
        continue;
      }
      xml << ">\n";
      if (r->outcome == Outcome::skipped) {
        xml << "      <skipped message=\"" << xml_escaped(r->skip_reason) << "\"/>\n";
      } else {
        std::string body;
        for (const Mismatch& m : r->mismatches) body += mismatch_text(m) + "\n";
        xml << "      <failure message=\"" << xml_escaped(r->mismatches.front().check) << "\">" << xml_escaped(body)
            << "</failure>\n";
      }
      xml << "    </testcase>\n";
    }
    xml << "  </testsuite>\n";
  }
  xml << "</testsuites>\n";
  return xml.str();
}

}  // namespace native_ops
