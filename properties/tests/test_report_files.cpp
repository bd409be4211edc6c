// SPDX-License-Identifier: MIT OR Apache-2.0
// The report text every subcommand writes (report/report_files.hpp): JUnit text that an XML 1.0
// parser reads whatever bytes a path or message held, and every report naming the run that wrote it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "report_files.hpp"

namespace w8a16::cli {
namespace {

// True when `s` is text XML 1.0 can hold in an attribute or element: valid UTF-8 (shortest forms,
// no surrogate, at most U+10FFFF), every code point a Char (#x9 | #xA | #xD | [#x20-#xD7FF] |
// [#xE000-#xFFFD] | [#x10000-#x10FFFF]), no raw < or ", and & only as an entity. Else false with where in *why.
bool xml_safe(const std::string& s, std::string* why) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
    const unsigned char c = b(i);
    std::uint32_t cp;
    std::size_t len;
    if (c < 0x80) cp = c, len = 1;
    else if (c >= 0xC2 && c <= 0xDF) cp = c & 0x1F, len = 2;
    else if (c >= 0xE0 && c <= 0xEF) cp = c & 0x0F, len = 3;
    else if (c >= 0xF0 && c <= 0xF4) cp = c & 0x07, len = 4;
    else return *why = "invalid UTF-8 lead byte at " + std::to_string(i), false;
    if (i + len > s.size()) return *why = "UTF-8 cut short at " + std::to_string(i), false;
    for (std::size_t j = 1; j < len; ++j) {
      if ((b(i + j) & 0xC0) != 0x80) return *why = "invalid UTF-8 continuation at " + std::to_string(i + j), false;
      cp = cp << 6 | (b(i + j) & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len]) return *why = "overlong UTF-8 at " + std::to_string(i), false;
    const bool is_char = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
    if (!is_char) return *why = "code point " + std::to_string(cp) + " is not an XML 1.0 Char", false;
    if (cp == '&') {
      bool entity = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
        entity = entity || s.compare(i, std::strlen(e), e) == 0;
      if (!entity) return *why = "a raw & at " + std::to_string(i), false;
    }
    if (cp == '<' || cp == '"') return *why = "a raw markup character at " + std::to_string(i), false;
    i += len;
  }
  return true;
}

TEST(ReportXmlText, EveryByteAndEveryPairOfBytesIsWellFormed) {
  std::string why;
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    ASSERT_TRUE(xml_safe(xml_text(one), &why)) << "byte " << a << ": " << why;
    for (int b = 0; b < 256; ++b) {
      const std::string two = one + static_cast<char>(b);
      ASSERT_TRUE(xml_safe(xml_text(two), &why)) << "bytes " << a << " " << b << ": " << why;
    }
  }
}

TEST(ReportXmlText, RandomBytesAreWellFormed) {
  std::mt19937_64 rng(0x5eed);
  std::string why;
  // Bytes drawn mostly from the ones that start or continue UTF-8 sequences, so that cut, overlong,
  // surrogate and noncharacter sequences are common.
  const unsigned char pool[] = {0x00, 0x09, 0x0A, 0x1B, 0x22, 0x26, 0x3C, 0x3E, 0x41, 0x5C, 0x7F, 0x80, 0x8F, 0xA0,
                                0xBF, 0xBE, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  for (int t = 0; t < 200000; ++t) {
    std::string s;
    const int n = 1 + static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) s += static_cast<char>(rng() % 4 == 0 ? rng() % 256 : pool[rng() % sizeof pool]);
    ASSERT_TRUE(xml_safe(xml_text(s), &why)) << why;
  }
}

TEST(ReportXmlText, ValidTextPassesAndWhatCannotBeHeldIsWrittenOut) {
  EXPECT_EQ(xml_text("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80 a\tb\nc"),
            "caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80 a\tb\nc");
  EXPECT_EQ(xml_text("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
  EXPECT_EQ(xml_text("\x1B[31m"), "\\x1B[31m");
  EXPECT_EQ(xml_text("bad\xFF\xFE"), "bad\\xFF\\xFE");
  EXPECT_EQ(xml_text("cut \xE6\x97"), "cut \\xE6\\x97");
  EXPECT_EQ(xml_text("overlong \xC0\xAF"), "overlong \\xC0\\xAF");
  EXPECT_EQ(xml_text("surrogate \xED\xA0\x80"), "surrogate \\xED\\xA0\\x80");
  EXPECT_EQ(xml_text("nonchar \xEF\xBF\xBE\xEF\xBF\xBF"), "nonchar \\u{FFFE}\\u{FFFF}");
}

TEST(ReportRun, StatusReportsNameTheRunTheSameWayEveryTime) {
  char arg0[] = "w8a16check", arg1[] = "verify", arg2[] = "--json", arg3[] = "a\nb\xFF<&>\".json";
  char* argv[] = {arg0, arg1, arg2, arg3, nullptr};
  start_run(4, argv);
  const RunInfo& r = run_info();
  EXPECT_TRUE(std::regex_match(r.id, std::regex("[0-9a-f]{32}"))) << r.id;
  EXPECT_TRUE(std::regex_match(r.started_utc,
                               std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z")))
      << r.started_utc;
  EXPECT_FALSE(r.host.empty());
  EXPECT_EQ(r.command_line, "w8a16check verify --json 'a\\nb\\xFF<&>\".json'");

  const auto incomplete = nlohmann::json::parse(status_report(ReportFormat::json, "verify", "INCOMPLETE", "running"));
  const auto error = nlohmann::json::parse(status_report(ReportFormat::json, "verify", "ERROR", "a\xFF"));
  for (const auto& j : {incomplete, error}) {
    EXPECT_EQ(j.at("report_schema_version"), kReportSchemaVersion);
    EXPECT_EQ(j.at("run").at("id"), r.id);
    EXPECT_EQ(j.at("run").at("started_utc"), r.started_utc);
    EXPECT_EQ(j.at("run").at("host"), r.host);
    EXPECT_EQ(j.at("run").at("command_line"), r.command_line);
  }
  const std::string junit = status_report(ReportFormat::junit, "verify", "ERROR", "why \xFF\x1B <&>");
  std::string why;
  // Markup aside, every character of the document is one XML 1.0 holds.
  std::string text = std::regex_replace(junit, std::regex("<[^<>]*>"), "");
  EXPECT_TRUE(xml_safe(text, &why)) << why << "\n" << junit;
  EXPECT_NE(junit.find("<property name=\"run.id\" value=\"" + r.id + "\"/>"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<property name=\"report.schema_version\" value=\"" + std::to_string(kReportSchemaVersion) +
                       "\"/>"),
            std::string::npos);
  EXPECT_NE(
      junit.find(
          "<property name=\"run.command_line\" value=\"w8a16check verify --json 'a\\nb\\xFF&lt;&amp;&gt;&quot;.json'\"/>"),
      std::string::npos)
      << junit;
}

}  // namespace
}  // namespace w8a16::cli
