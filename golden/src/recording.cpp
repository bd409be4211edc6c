// SPDX-License-Identifier: MIT OR Apache-2.0
// The recording format (recording.hpp): digest, formatting, a strict parser and atomic writing.
#include "w8a16/golden/recording.hpp"

#include "w8a16/golden/files.hpp"

#include <cinttypes>
#include <cstdio>
#include <set>
#include <system_error>

namespace w8a16::golden {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

bool parse_u64_dec(std::string_view s, std::uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  std::uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

// Splits off the next space-separated token (single spaces, as written).
std::string_view next_token(std::string_view* rest) {
  const std::size_t sp = rest->find(' ');
  std::string_view tok = rest->substr(0, sp);
  *rest = sp == std::string_view::npos ? std::string_view{} : rest->substr(sp + 1);
  return tok;
}

// The trailer's body digest: FNV-1a 64 over each line of `body` without its ending, plus '\n'.
std::uint64_t body_digest(std::string_view body) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t eol = body.find('\n', pos);
    if (eol == std::string_view::npos) eol = body.size();
    std::string_view line = body.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    for (const char ch : line) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
    h = (h ^ static_cast<unsigned char>('\n')) * 0x100000001b3ull;
    pos = eol + 1;
  }
  return h;
}

std::string trailer_line(std::size_t cases, std::uint64_t digest) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "end cases=%zu body=fnv1a64:0x%016llx\n", cases,
                static_cast<unsigned long long>(digest));
  return buf;
}

}  // namespace

std::vector<std::uint16_t> used_outputs(const Case& c, const std::vector<std::uint16_t>& c_bits) {
  std::vector<std::uint16_t> used;
  used.reserve(static_cast<std::size_t>(c.m) * c.n);
  for (std::uint64_t r = 0; r < c.m; ++r)
    for (std::uint64_t j = 0; j < c.n; ++j) {
      const std::uint64_t at = r * c.c_row_stride + j;
      used.push_back(at < c_bits.size() ? c_bits[at] : 0);
    }
  return used;
}

std::uint64_t outputs_digest(const std::vector<std::uint16_t>& used) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint16_t v : used) {
    h = (h ^ (v & 0xFFu)) * 0x100000001b3ull;
    h = (h ^ (v >> 8)) * 0x100000001b3ull;
  }
  return h;
}

RecordedOutput make_recorded_output(const Case& c, const std::vector<std::uint16_t>& used) {
  RecordedOutput r;
  r.c = c;
  r.outputs = used.size();
  r.digest = outputs_digest(used);
  if (r.outputs <= kRecordingFullOutputsMax) r.bits = used;
  return r;
}

RecordedVerdict recorded_verdict(const RecordedOutput& recorded, const std::vector<std::uint16_t>* used) {
  RecordedVerdict v;
  v.digest_only = recorded.bits.empty();
  if (!used) return v;  // not replayed
  v.digest = outputs_digest(*used);
  v.size_differs = used->size() != recorded.outputs;
  if (v.size_differs) {
    v.kind = RecordedVerdict::Kind::differs;
    return v;
  }
  if (v.digest_only) {
    v.kind = v.digest == recorded.digest ? RecordedVerdict::Kind::equal : RecordedVerdict::Kind::differs;
    return v;
  }
  // The full bytes: every element, so that a digest collision cannot pass for agreement.
  v.outputs_compared = used->size();
  for (std::size_t i = 0; i < used->size(); ++i)
    if ((*used)[i] != recorded.bits[i]) {
      if (v.outputs_differing == 0) v.first_differing = i;
      ++v.outputs_differing;
    }
  v.kind = v.outputs_differing == 0 ? RecordedVerdict::Kind::equal : RecordedVerdict::Kind::differs;
  return v;
}

std::string recorded_verdict_text(const RecordedOutput& recorded, const std::vector<std::uint16_t>* used,
                                  const RecordedVerdict& v) {
  if (v.kind == RecordedVerdict::Kind::equal) return "";
  if (v.kind == RecordedVerdict::Kind::not_replayed || !used) return "not replayed";
  char buf[160];
  std::snprintf(buf, sizeof buf, "digest 0x%016" PRIx64 ", recorded 0x%016" PRIx64, v.digest, recorded.digest);
  std::string s = buf;
  if (v.size_differs) {
    s += "; " + std::to_string(used->size()) + " outputs given, the recording holds " +
         std::to_string(recorded.outputs);
  } else if (!v.digest_only) {
    const std::uint64_t n = recorded.c.n, i = v.first_differing;
    std::snprintf(buf, sizeof buf,
                  "; %" PRIu64 " outputs differ, first C[%" PRIu64 "][%" PRIu64 "] = 0x%04X, recorded 0x%04X",
                  v.outputs_differing, i / n, i % n, (*used)[i], recorded.bits[i]);
    s += buf;
  } else {
    s += " (the recording holds the digest only: which outputs differ is not known)";
  }
  return s;
}

std::string format_recording(const Recording& r) {
  // Comment lines first (the parser skips them): the licence header every file of the project carries.
  std::string
      s = "# SPDX-License-Identifier: MIT OR Apache-2.0\n"
          "# Recorded by `w8a16check record` (format: golden/include/w8a16/golden/recording.hpp).\n";
  s += std::string(kRecordingMagic) + " " + std::to_string(kRecordingVersion) + "\n";
  s += "gpu: " + r.header.gpu + "\n";
  s += "compute_capability: " + r.header.compute_capability + "\n";
  s += "driver: " + r.header.driver + "\n";
  s += "cuda: " + r.header.cuda + "\n";
  s += "commit: " + r.header.commit + "\n";
  s += "digest: " + std::string(kRecordingDigestName) + "\n";
  for (const RecordedOutput& o : r.outputs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "out 0x%016llx %llu ", static_cast<unsigned long long>(o.digest),
                  static_cast<unsigned long long>(o.outputs));
    s += buf;
    if (o.bits.empty()) {
      s += "-";
    } else {
      for (std::uint16_t v : o.bits) {
        s += kHex[(v >> 12) & 15];
        s += kHex[(v >> 8) & 15];
        s += kHex[(v >> 4) & 15];
        s += kHex[v & 15];
      }
    }
    s += " " + format_case(o.c) + "\n";
  }
  return s + trailer_line(r.outputs.size(), body_digest(s));
}

bool parse_recording(std::string_view text, const std::string& source_name, Recording* out, std::string* error) {
  Recording r;
  static constexpr const char* kKeys[] = {"gpu", "compute_capability", "driver", "cuda", "commit", "digest"};
  std::size_t keys_seen = 0;
  bool magic_seen = false, trailer_seen = false;
  std::set<std::string> cases_seen;
  long line_no = 0;
  std::size_t pos = 0;
  auto fail = [&](const std::string& why) {
    *error = source_name + ":" + std::to_string(line_no) + ": " + why;
    return false;
  };
  while (pos < text.size()) {
    const std::size_t line_start = pos;
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trailer_seen) return fail("text after the trailer line (the trailer ends the file)");
    if (magic_seen && r.header.version >= 2 && line.substr(0, 4) == "end ") {
      if (keys_seen < std::size(kKeys))
        return fail("trailer before the header line '" + std::string(kKeys[keys_seen]) + ":'");
      std::string_view rest = line.substr(4);
      const std::string_view cases_tok = next_token(&rest), body_tok = next_token(&rest);
      std::uint64_t cases = 0, digest = 0;
      bool ok = cases_tok.substr(0, 6) == "cases=" && parse_u64_dec(cases_tok.substr(6), &cases) && rest.empty() &&
                body_tok.size() == 5 + 8 + 18 && body_tok.substr(0, 15) == "body=fnv1a64:0x";
      for (std::size_t i = 15; ok && i < body_tok.size(); ++i) {
        const int v = hex_value(body_tok[i]);
        ok = v >= 0;
        digest = (digest << 4) | static_cast<std::uint64_t>(v < 0 ? 0 : v);
      }
      if (!ok)
        return fail("corrupt trailer " + quote(line, 100) + ": expected 'end cases=<count> body=fnv1a64:0x<16 hex>'");
      if (cases != r.outputs.size())
        return fail("the trailer says " + std::to_string(cases) + " cases, the file holds " +
                    std::to_string(r.outputs.size()) + ": it was cut or edited after it was written");
      const std::uint64_t got = body_digest(text.substr(0, line_start));
      if (got != digest) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "the body's digest is 0x%016llx, the trailer says 0x%016llx",
                      static_cast<unsigned long long>(got), static_cast<unsigned long long>(digest));
        return fail(std::string(buf) + ": the file was changed after it was written");
      }
      trailer_seen = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (!magic_seen) {
      std::string_view rest = line;
      const std::string_view magic = next_token(&rest);
      if (magic != kRecordingMagic)
        return fail("not a recording: the first line must be '" + std::string(kRecordingMagic) + " <version>'");
      std::uint64_t v = 0;
      if (!parse_u64_dec(rest, &v)) return fail("corrupt version " + quote(rest, 40));
      if (v < kRecordingOldestVersion || v > kRecordingVersion)
        return fail("unknown recording version " + std::to_string(v) + " (this build reads versions " +
                    std::to_string(kRecordingOldestVersion) + ".." + std::to_string(kRecordingVersion) + ")");
      r.header.version = static_cast<std::uint32_t>(v);
      magic_seen = true;
      continue;
    }
    if (keys_seen < std::size(kKeys)) {
      const std::string key = kKeys[keys_seen];
      const std::string prefix = key + ": ";
      if (line.substr(0, prefix.size()) != prefix || line.size() == prefix.size())
        return fail("expected the header line '" + key + ": <value>' here, got " + quote(line, 60));
      const std::string value(line.substr(prefix.size()));
      // Header values are printable text: a control byte (a stray '\r' above all, which the line
      // reader trims at a line's end) would not survive a write and a re-read unchanged.
      for (const char ch : value)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F)
          return fail("the value of '" + key + ":' holds a control character (byte " +
                      std::to_string(static_cast<unsigned>(static_cast<unsigned char>(ch))) + ")");
      if (key == "gpu") r.header.gpu = value;
      else if (key == "compute_capability") r.header.compute_capability = value;
      else if (key == "driver") r.header.driver = value;
      else if (key == "cuda") r.header.cuda = value;
      else if (key == "commit") r.header.commit = value;
      else if (value != kRecordingDigestName)
        return fail("unknown digest " + quote(value, 60) + " (this build knows " + std::string(kRecordingDigestName) +
                    ")");
      ++keys_seen;
      continue;
    }
    std::string_view rest = line;
    if (next_token(&rest) != "out") return fail("corrupt line: expected 'out 0x<digest> <outputs> <hex|-> case/1 ...'");
    const std::string_view digest_tok = next_token(&rest);
    if (digest_tok.size() != 18 || digest_tok.substr(0, 2) != "0x")
      return fail("corrupt digest " + quote(digest_tok, 40));
    RecordedOutput o;
    for (char ch : digest_tok.substr(2)) {
      const int v = hex_value(ch);
      if (v < 0) return fail("corrupt digest " + quote(digest_tok, 40));
      o.digest = (o.digest << 4) | static_cast<std::uint64_t>(v);
    }
    const std::string_view count_tok = next_token(&rest);
    if (!parse_u64_dec(count_tok, &o.outputs)) return fail("corrupt output count " + quote(count_tok, 40));
    const std::string_view bytes_tok = next_token(&rest);
    std::string why;
    if (!parse_case(rest, &o.c, &why)) return fail("corrupt case line: " + why);
    if (o.outputs != static_cast<std::uint64_t>(o.c.m) * o.c.n)
      return fail("output count " + std::to_string(o.outputs) +
                  " is not m * n = " + std::to_string(static_cast<std::uint64_t>(o.c.m) * o.c.n));
    const bool want_bits = o.outputs <= kRecordingFullOutputsMax;
    if (!want_bits) {
      if (bytes_tok != "-")
        return fail("full bytes given for " + std::to_string(o.outputs) + " outputs (only up to " +
                    std::to_string(kRecordingFullOutputsMax) + " are stored; expected '-')");
    } else {
      if (bytes_tok.size() != 4 * o.outputs)
        return fail("expected " + std::to_string(4 * o.outputs) + " hex digits of full bytes, got " +
                    std::to_string(bytes_tok.size()));
      o.bits.resize(o.outputs);
      for (std::size_t i = 0; i < o.outputs; ++i) {
        std::uint32_t v = 0;
        for (int d = 0; d < 4; ++d) {
          const int h = hex_value(bytes_tok[4 * i + d]);
          if (h < 0) return fail("corrupt full bytes: not hex at output " + std::to_string(i));
          v = (v << 4) | static_cast<std::uint32_t>(h);
        }
        o.bits[i] = static_cast<std::uint16_t>(v);
      }
      if (outputs_digest(o.bits) != o.digest)
        return fail("the full bytes do not have the recorded digest (corrupt line)");
    }
    if (!cases_seen.insert(format_case(o.c)).second) return fail("case recorded twice: " + format_case(o.c));
    r.outputs.push_back(std::move(o));
  }
  if (!magic_seen) {
    *error = source_name + ": empty: not a recording";
    return false;
  }
  if (keys_seen < std::size(kKeys)) {
    *error = source_name + ": the header ends before '" + kKeys[keys_seen] + ":'";
    return false;
  }
  if (r.header.version >= 2 && !trailer_seen) {
    *error = source_name + ": ends after " + std::to_string(r.outputs.size()) +
             " cases without its trailer line 'end cases=... body=...': the file is cut";
    return false;
  }
  r.length_verified = r.header.version >= 2;
  *out = std::move(r);
  return true;
}

bool read_recording_file(const std::string& path, Recording* out, std::string* error) {
  std::string text, why;
  if (!read_regular_file(path, kMaxInputFileBytes, &text, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return parse_recording(text, shown(path), out, error);
}

bool write_recording_file(const std::string& path, const Recording& r, std::string* error) {
  // What is written must read back: a case given twice, or a header value the reader refuses (empty,
  // a control byte), is refused here rather than left in a file every reader then rejects.
  const std::string text = format_recording(r);
  Recording back;
  std::string why;
  if (!parse_recording(text, shown(path), &back, &why)) {
    *error = why + " (in what would have been written: nothing was written)";
    return false;
  }
  if (!write_file_atomic(path, text, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return true;
}

bool upgrade_recording(std::string_view text, const std::string& source_name, std::string* upgraded,
                       std::string* error) {
  Recording before;
  if (!parse_recording(text, source_name, &before, error)) return false;
  if (before.header.version == kRecordingVersion) {
    *upgraded = std::string(text);
    return true;
  }
  // The magic line is the first line that is neither blank nor a comment.
  std::size_t pos = 0, magic_at = std::string_view::npos, magic_len = 0;
  while (pos < text.size() && magic_at == std::string_view::npos) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line[0] != '#') magic_at = pos, magic_len = line.size();
    pos = eol + 1;
  }
  std::string body(text.substr(0, magic_at));
  body += std::string(kRecordingMagic) + " " + std::to_string(kRecordingVersion);
  body += text.substr(magic_at + magic_len);
  if (!body.empty() && body.back() != '\n') body += '\n';
  const std::string result = body + trailer_line(before.outputs.size(), body_digest(body));
  Recording after;
  if (!parse_recording(result, source_name + " (upgraded)", &after, error)) return false;
  bool same = after.outputs.size() == before.outputs.size() && after.header.gpu == before.header.gpu &&
              after.header.compute_capability == before.header.compute_capability &&
              after.header.driver == before.header.driver && after.header.cuda == before.header.cuda &&
              after.header.commit == before.header.commit;
  for (std::size_t i = 0; same && i < after.outputs.size(); ++i) {
    const RecordedOutput &x = before.outputs[i], &y = after.outputs[i];
    same = x.c == y.c && x.digest == y.digest && x.outputs == y.outputs && x.bits == y.bits;
  }
  if (!same) {
    *error = source_name + ": the upgraded text does not hold the same recording (nothing written)";
    return false;
  }
  *upgraded = result;
  return true;
}

std::string gpu_slug(std::string_view name) {
  std::string lower;
  for (char ch : name) lower += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
  if (lower.rfind("nvidia ", 0) == 0) lower.erase(0, 7);
  std::string slug;
  for (char ch : lower) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (keep) slug += ch;
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-gpu" : slug;
}

bool recording_is_from_gpu(const Recording& r, std::string_view gpu, std::string* error) {
  if (gpu_slug(r.header.gpu) == gpu_slug(gpu)) return true;
  *error = "the recording is from GPU '" + r.header.gpu + "', not '" + std::string(gpu) + "'";
  return false;
}

}  // namespace w8a16::golden
