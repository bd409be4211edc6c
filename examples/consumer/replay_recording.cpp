// SPDX-License-Identifier: MIT OR Apache-2.0
// A downstream use of the installed emulator: replays the fully recorded cases of a GPU recording
// (.rec) on the emulator and compares every output bit for bit with what the hardware produced.
//
//   replay_recording FILE.rec [MAX_CASES]
//
// Exit status: 0 every replayed case matches; 1 some case differs; 2 the file cannot be read or
// holds no fully recorded case (nothing checked is never a pass).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/reference/contract.hpp"

namespace {

std::vector<std::uint16_t> emulate(const w8a16::golden::Case& c, const w8a16::golden::CaseInputs& in) {
  std::vector<std::uint16_t> out = w8a16::golden::sentinel_output(c);
  const w8a16::ref::GemmView v = w8a16::golden::case_view(c, in);
  // The tensor-core entries meet the canonical fold (NUMERICS.md 2.1), the GEMVs their order (2.2).
  if (w8a16::golden::entry_point_is_gemv(c.entry)) w8a16::ref::gemm_gemv(v, out.data(), c.c_row_stride);
  else w8a16::ref::gemm_canonical(v, w8a16::ref::Arch::sm90, out.data(), c.c_row_stride);
  return w8a16::golden::used_outputs(c, out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s FILE.rec [MAX_CASES]\n", argv[0]);
    return 2;
  }
  const long max_cases = argc == 3 ? std::strtol(argv[2], nullptr, 10) : 40;
  w8a16::golden::Recording rec;
  std::string error;
  if (!w8a16::golden::read_recording_file(argv[1], &rec, &error)) {
    std::fprintf(stderr, "replay_recording: %s\n", error.c_str());
    return 2;
  }
  std::printf("recording of %s (compute capability %s, driver %s), %zu cases\n", rec.header.gpu.c_str(),
              rec.header.compute_capability.c_str(), rec.header.driver.c_str(), rec.outputs.size());
  long replayed = 0, differ = 0;
  for (const w8a16::golden::RecordedOutput& o : rec.outputs) {
    if (o.bits.empty() || replayed == max_cases) continue;  // digest-only cases are the large ones
    w8a16::golden::CaseInputs in;
    if (!w8a16::golden::regenerate_inputs(o.c, &in, &error)) {
      std::fprintf(stderr, "replay_recording: %s: %s\n", w8a16::golden::format_case(o.c).c_str(), error.c_str());
      return 2;
    }
    const std::vector<std::uint16_t> got = emulate(o.c, in);
    ++replayed;
    if (got != o.bits) {
      ++differ;
      std::printf("DIFFERS %s\n", w8a16::golden::format_case(o.c).c_str());
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay_recording: %s holds no fully recorded case: nothing was checked\n", argv[1]);
    return 2;
  }
  std::printf("%ld replayed, %ld differ from the hardware\n", replayed, differ);
  return differ == 0 ? 0 : 1;
}
